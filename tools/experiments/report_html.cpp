#include "experiments/report_html.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "harness/measure.h"
#include "core/bytes.h"
#include "index/atomic_file.h"

namespace privsearch::tools {
namespace {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '&': o += "&amp;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string num(const nlohmann::json& v, int digits = 4) {
  if (v.is_null()) return "&ndash;";
  if (v.is_number_float()) return fmt::format("{:.{}f}", v.get<double>(), digits);
  if (v.is_number()) return v.dump();
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_string()) return esc(v.get<std::string>());
  return esc(v.dump());
}

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;
};

// A line chart with axes, ticks and a legend; x may be log-scaled.
std::string line_chart(const std::string& title, const std::string& xlabel,
                       const std::string& ylabel, const std::vector<Series>& series,
                       bool logx = false) {
  const double W = 720, H = 320, L = 60, R = 170, T = 30, B = 45;
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
  for (const auto& s : series) {
    for (auto [x, y] : s.points) {
      const double xv = logx ? std::log2(x) : x;
      x0 = std::min(x0, xv);
      x1 = std::max(x1, xv);
      y0 = std::min(y0, y);
      y1 = std::max(y1, y);
    }
  }
  if (x0 >= x1) x1 = x0 + 1;
  if (y0 >= y1) y1 = y0 + 1e-3;
  // "Nice" ticks: a step of 1, 2 or 5 x 10^k giving about five intervals, the axis snapped
  // to multiples of it, labels with just the digits the step needs.
  const double raw = (y1 - y0) / 5.0;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * mag;
  for (const double m : {1.0, 2.0, 5.0}) {
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  }
  y0 = std::floor(y0 / step) * step;
  y1 = std::ceil(y1 / step) * step;
  const int ticks = static_cast<int>(std::lround((y1 - y0) / step));
  const int digits = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
  auto px = [&](double x) { return L + ((logx ? std::log2(x) : x) - x0) / (x1 - x0) * (W - L - R); };
  auto py = [&](double y) { return H - B - (y - y0) / (y1 - y0) * (H - T - B); };
  static const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
  std::ostringstream o;
  o << fmt::format(R"(<figure><svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" role="img" aria-label="{}">)",
                   W, H, esc(title));
  o << fmt::format(R"(<text x="{}" y="18" font-size="14" font-weight="bold">{}</text>)", L, esc(title));
  o << fmt::format(R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#444"/><line x1="{0}" y1="{3}" x2="{0}" y2="{1}" stroke="#444"/>)",
                   L, H - B, W - R, T);
  for (int i = 0; i <= ticks; ++i) {
    const double yv = y0 + step * i;
    o << fmt::format(R"(<line x1="{0}" y1="{1:.1f}" x2="{2}" y2="{1:.1f}" stroke="#eee"/><text x="{3}" y="{4:.1f}" font-size="11" text-anchor="end">{5:.{6}f}</text>)",
                     L, py(yv), W - R, L - 6, py(yv) + 4, yv, digits);
  }
  std::vector<double> xt;
  for (const auto& s : series) {
    for (auto [x, y] : s.points) xt.push_back(x);
  }
  std::sort(xt.begin(), xt.end());
  xt.erase(std::unique(xt.begin(), xt.end()), xt.end());
  for (double x : xt) {
    o << fmt::format(R"(<text x="{:.1f}" y="{}" font-size="11" text-anchor="middle">{}</text>)", px(x),
                     H - B + 16, x == std::floor(x) ? fmt::format("{}", static_cast<long long>(x)) : fmt::format("{:.2f}", x));
  }
  o << fmt::format(R"(<text x="{}" y="{}" font-size="12" text-anchor="middle">{}</text>)",
                   (L + W - R) / 2, H - 8, esc(xlabel));
  o << fmt::format(R"svg(<text x="14" y="{}" font-size="12" transform="rotate(-90 14 {})" text-anchor="middle">{}</text>)svg",
                   (T + H - B) / 2, (T + H - B) / 2, esc(ylabel));
  for (std::size_t i = 0; i < series.size(); ++i) {
    const char* c = colors[i % 6];
    std::string pts;
    for (auto [x, y] : series[i].points) pts += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
    o << fmt::format(R"(<polyline fill="none" stroke="{}" stroke-width="2" points="{}"/>)", c, pts);
    for (auto [x, y] : series[i].points) {
      o << fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="3" fill="{}"><title>{}: {} = {:.4f}</title></circle>)",
                       px(x), py(y), c, esc(series[i].name), x, y);
    }
    o << fmt::format(R"(<rect x="{}" y="{}" width="12" height="3" fill="{}"/><text x="{}" y="{}" font-size="12">{}</text>)",
                     W - R + 10, T + 10 + 18.0 * static_cast<double>(i), c, W - R + 28,
                     T + 14 + 18.0 * static_cast<double>(i), esc(series[i].name));
  }
  o << "</svg></figure>";
  return o.str();
}

std::string table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows) {
  std::ostringstream o;
  o << "<table><thead><tr>";
  for (const auto& h : head) o << "<th>" << esc(h) << "</th>";
  o << "</tr></thead><tbody>";
  for (const auto& r : rows) {
    o << "<tr>";
    // Numbers (and intervals of numbers) right-aligned for comparison, words left-aligned.
    for (const auto& c : r) {
      const bool numeric = !c.empty() && (std::isdigit(static_cast<unsigned char>(c[0])) ||
                                          c[0] == '-' || c[0] == '+' || c[0] == '&');
      o << (numeric ? "<td>" : "<td class=\"t\">") << c << "</td>";
    }
    o << "</tr>";
  }
  o << "</tbody></table>";
  return o.str();
}

std::string interval(const nlohmann::json& i) {
  if (!i.is_object()) return num(i);
  if (i.contains("ci_low")) {
    return fmt::format("{} [{}, {}]", num(i["mean"], 5), num(i["ci_low"], 5), num(i["ci_high"], 5));
  }
  if (i.contains("ci95") && i["ci95"].is_array() && i["ci95"].size() == 2) {
    return fmt::format("{} [{}, {}]", num(i["mean"]), num(i["ci95"][0]), num(i["ci95"][1]));
  }
  return esc(i.dump());
}

std::string eval_sections(const nlohmann::json& j) {
  std::ostringstream o;
  if (j.contains("methods")) {
    std::vector<std::vector<std::string>> rows;
    for (auto& [name, m] : j["methods"].items()) {
      rows.push_back({esc(name), interval(m.value("ndcg@10", nlohmann::json())),
                      interval(m.value("mrr@10", nlohmann::json())),
                      interval(m.value("recall@10", nlohmann::json())),
                      interval(m.value("recall@100", nlohmann::json()))});
    }
    o << "<h2>Quality ladder (95% bootstrap intervals)</h2>"
      << table({"method", "nDCG@10", "MRR@10", "Recall@10", "Recall@100"}, rows);
  }
  if (j.contains("encrypted_rerank")) {
    const auto& e = j["encrypted_rerank"];
    o << "<h2>Encrypted rerank through a provider process</h2>"
      << table({"figure", "value"},
               {{"decision (margin " + num(e["margin"], 3) + ")", "<b>" + num(e["decision"]) + "</b>"},
                {"nDCG@10 CKKS / plaintext rerank", num(e["ndcg@10_ckks"]) + " / " + num(e["ndcg@10_plaintext_rerank"])},
                {"CKKS - plaintext nDCG@10 [95% CI]", interval(e["ckks_minus_plain_ndcg10"])},
                {"exact top-10 order match", num(e["top10_order_match"])},
                {"max / mean abs score error", num(e["numerical"]["max_abs_error"], 7) + " / " + num(e["numerical"]["mean_abs_error"], 7)},
                {"end to end ms (median / p95)", e.contains("end_to_end_ms") ? num(e["end_to_end_ms"]["median"], 1) + " / " + num(e["end_to_end_ms"]["p95"], 1) : "-"},
                {"queries, K", num(e["queries"]) + ", " + num(e["k"])}});
  }
  return o.str();
}

std::string sweep_sections(const nlohmann::json& j) {
  std::ostringstream o;
  Series exact{"exact projected", {}}, pqo{"PQ only", {}}, rr{"PQ + rerank (K=100)", {}};
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : j["dimension_curve"]) {
    const double d = c["dim"].get<double>();
    exact.points.push_back({d, c["ndcg@10_exact_projected"]["test"].get<double>()});
    pqo.points.push_back({d, c["ndcg@10_pq_only"]["test"].get<double>()});
    rr.points.push_back({d, c["K=100"]["ndcg@10_pq_rerank"]["test"].get<double>()});
    rows.push_back({num(c["dim"]), num(c["pq_m"]), num(c["ndcg@10_exact_projected"]["test"]),
                    num(c["ndcg@10_pq_only"]["test"]), num(c["K=100"]["ndcg@10_pq_rerank"]["test"]),
                    num(c["K=100"]["candidate_recall_of_exact_top10"]["test"])});
  }
  o << "<h2>Quality by projected dimension (test split)</h2>"
    << line_chart("nDCG@10 by d' (M = d'/8)", "d' (log scale)", "nDCG@10", {exact, pqo, rr}, true)
    << table({"d'", "M", "exact projected", "PQ only", "PQ + rerank", "recall of exact top-10 in K=100"}, rows);
  Series kr{"PQ + rerank", {}}, krec{"candidate recall", {}};
  for (auto& [key, v] : j["k_sweep"].items()) {
    if (key.rfind("K=", 0) != 0) continue;
    const double k = std::stod(key.substr(2));
    kr.points.push_back({k, v["ndcg@10_pq_rerank"]["test"].get<double>()});
    krec.points.push_back({k, v["candidate_recall_of_exact_top10"]["test"].get<double>()});
  }
  std::sort(kr.points.begin(), kr.points.end());
  std::sort(krec.points.begin(), krec.points.end());
  o << "<h2>K sweep</h2>" << line_chart("nDCG@10 and candidate recall by K", "K (log scale)", "value", {kr, krec}, true);
  std::vector<std::vector<std::string>> mrows;
  for (const auto& m : j["m_sensitivity"]) {
    mrows.push_back({num(m["pq_m"]), num(m["ndcg@10_pq_only"]["test"]), num(m["K=100"]["ndcg@10_pq_rerank"]["test"])});
  }
  o << "<h2>PQ sensitivity to M</h2>" << table({"M", "PQ only", "PQ + rerank (K=100)"}, mrows);
  std::vector<std::vector<std::string>> prows;
  for (auto& [name, v] : j["projection_controls"].items()) {
    prows.push_back({esc(name), num(v["ndcg@10_exact_projected"]["test"]), num(v["ndcg@10_exact_projected"]["validation"])});
  }
  o << "<h2>Projection controls</h2>" << table({"projection", "exact projected nDCG@10 (test)", "(validation)"}, prows);
  return o.str();
}

std::string audit_sections(const nlohmann::json& j) {
  std::ostringstream o;
  if (j.contains("pq_reconstruction")) {
    const auto& r = j["pq_reconstruction"];
    auto row = [&](const char* space) {
      const auto& s = r[space];
      return std::vector<std::string>{space, num(s["cosine"]["mean"]), num(s["cosine"]["p05"]),
                                      num(s["cosine"]["p95"]), num(s["relative_l2"]["mean"]), num(s["rmse"], 5)};
    };
    o << "<h2>Public-PQ reconstruction (" << num(r["sample"]) << " documents)</h2>"
      << table({"space", "mean cosine", "p05", "p95", "mean relative L2", "RMSE"}, {row("projected"), row("lifted")});
  }
  if (j.contains("candidate_leakage")) {
    std::map<std::string, Series> auc;
    std::vector<std::vector<std::string>> rows;
    std::vector<std::pair<double, std::string>> keys;  // numeric K order
    for (auto& [key, v] : j["candidate_leakage"].items()) keys.push_back({std::stod(key.substr(2)), key});
    std::sort(keys.begin(), keys.end());
    for (const auto& [k, key] : keys) {
      const auto& v = j["candidate_leakage"][key];
      for (auto& [name, m] : v.items()) {
        auc[name].name = name;
        auc[name].points.push_back({k, m["link_auc"].get<double>()});
        rows.push_back({esc(key), esc(name), num(m["cosine_mean"]), num(m["top10_overlap"]),
                        num(m["top100_overlap"]), num(m["hit10"]), num(m["link_auc"]),
                        num(m["link_tpr_at_1pct_fpr"])});
      }
    }
    std::vector<Series> s;
    for (auto& [n, v] : auc) {
      std::sort(v.points.begin(), v.points.end());
      s.push_back(v);
    }
    o << "<h2>What the candidate IDs reveal</h2>"
      << "<p>Set linkability AUC (K = 100): <b>" << num(j.value("link_auc_set", nlohmann::json())) << "</b>; with the "
      << "client's permutation: <b>" << num(j.value("link_auc_set_permuted", nlohmann::json()))
      << "</b>. True-query Hit@10: " << num(j.value("true_query_hit10", nlohmann::json())) << ".</p>"
      << line_chart("Linkability ROC AUC of two halves of one candidate list", "K (log scale)", "AUC", s, true)
      << table({"K", "estimator", "cosine to query", "top-10 overlap", "top-100 overlap", "Hit@10", "link AUC", "TPR @1% FPR"}, rows);
  }
  if (j.contains("circuit_privacy")) {
    const auto& c = j["circuit_privacy"];
    o << "<h2>Circuit-privacy boundary</h2>"
      << table({"figure", "value"},
               {{"unique response hashes, one request x " + num(c["repeats"]), num(c["fixed_request_unique_response_hashes"])},
                {"unique response hashes, fresh encryptions", num(c["fresh_encryption_unique_response_hashes"])},
                {"explicit output sanitisation", num(c["explicit_output_sanitisation_present"])},
                {"max abs error", num(c["max_abs_error"], 7)}});
    if (c.contains("rerandomized")) {
      const auto& f = c["rerandomized"];
      o << "<p>With the provider's re-randomization (<code>--flood-bits "
        << num(f["flood_security_bits"]) << "</code>): fresh encryption of zero under the "
        << "client's public key with flooding noise sized for statistical distance 2<sup>-"
        << num(f["flood_security_bits"]) << "</sup>.</p>"
        << table({"figure", "deterministic", "re-randomized"},
                 {{"unique response hashes, one request", num(c["fixed_request_unique_response_hashes"]),
                   num(f["fixed_request_unique_response_hashes"])},
                  {"max abs error", num(c["max_abs_error"], 7), num(f["max_abs_error"], 7)},
                  {"predicted precision (bits)", "-", num(f["predicted_precision_bits"], 2)},
                  {"provider ms (median)", num(c.value("provider_ms_median", nlohmann::json()), 2), num(f["provider_ms_median"], 2)},
                  {"response bytes", num(c.value("response_bytes", nlohmann::json())), num(f["response_bytes"])},
                  {"public key upload bytes", "0", num(f["public_key_bytes"])}})
        << "<p>Largest flooding security the preset affords at d' = 672, K = 100: "
        << num(c["max_flood_bits_8bit_precision"]) << " bits with 8 bits of precision left, "
        << num(c["max_flood_bits_12bit_precision"]) << " bits with 12.</p>";
    }
  }
  if (j.contains("score_oracle")) {
    const auto& s = j["score_oracle"];
    o << "<h2>Score-oracle extraction</h2>"
      << table({"figure", "value"},
               {{"mean cosine of recovered rows (budget disabled)", num(s["extraction_cosine"], 10)},
                {"queries / bytes / seconds", num(s["budget_disabled"]["queries"]) + " / " + num(s["budget_disabled"]["bytes"]) + " / " + num(s["budget_disabled"]["seconds"], 1)},
                {"default budget: answered before refusal", num(s["default_budget"]["answered_before_refusal"])},
                {"refused before a row completed", num(s["extraction_refused"])}});
  }
  return o.str();
}

}  // namespace

std::string render_report_html(const std::string& kind, const nlohmann::json& j) {
  std::ostringstream o;
  const std::string title = "privsearch " + kind + " report: " + j.value("dataset", std::string("-"));
  o << "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << esc(title)
    << "</title><style>body{font-family:system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1.2em;"
       "color:#222;line-height:1.45}table{border-collapse:collapse;margin:.6em 0 1.4em}td,th{border:"
       "1px solid #ccc;padding:.25em .6em;text-align:right}th{background:#f3f3f3}td:first-child,"
       "th:first-child,td.t{text-align:left}figure{margin:.5em 0}h2{margin-top:1.6em;border-bottom:1px "
       "solid #ddd}code{background:#f6f6f6}</style></head><body>";
  o << "<h1>" << esc(title) << "</h1>";
  if (kind == "eval") o << eval_sections(j);
  if (kind == "sweep") o << sweep_sections(j);
  if (kind == "audit") o << audit_sections(j);
  const auto env = machine_description();
  std::vector<std::vector<std::string>> rows;
  for (auto& [k, v] : env.items()) rows.push_back({esc(k), num(v)});
  for (const char* k : {"encoder", "seed", "dim", "pq_m", "k", "documents", "queries"}) {
    if (j.contains(k)) rows.push_back({k, num(j[k])});
  }
  if (j.contains("encrypted_rerank")) rows.push_back({"artifact version", num(j["encrypted_rerank"]["artifact_version"])});
  o << "<h2>Environment</h2>" << table({"item", "value"}, rows);
  o << "<p>Generated by <code>privsearch " << esc(kind == "sweep" ? "eval --sweep" : kind)
    << "</code>; the complete figures are in the command's JSON output.</p></body></html>\n";
  return o.str();
}

Status write_report_html(const std::filesystem::path& file, const std::string& kind,
                         const nlohmann::json& result) {
  const std::string html = render_report_html(kind, result);
  return index::write_bytes_atomically(
      file, byte_view(html));
}

}  // namespace privsearch::tools
