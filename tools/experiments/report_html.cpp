#include "experiments/report_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <sstream>
#include <vector>

#include "core/bytes.h"
#include "harness/measure.h"
#include "index/artifacts/atomic_file.h"

namespace privsearch::tools {
namespace {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '&':
        o += "&amp;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
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
// "Nice" ticks: a step of 1, 2 or 5 x 10^k giving about five intervals, the axis snapped
// to multiples of it, labels with just the digits the step needs.
struct YAxis {
  double y0 = 0, y1 = 0, step = 0;
  int ticks = 0, digits = 0;
};
YAxis nice_y_axis(double y0, double y1) {
  const double raw = (y1 - y0) / 5.0;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  YAxis a;
  a.step = 10 * mag;
  for (const double m : {1.0, 2.0, 5.0}) {
    if (m * mag >= raw) {
      a.step = m * mag;
      break;
    }
  }
  a.y0 = std::floor(y0 / a.step) * a.step;
  a.y1 = std::ceil(y1 / a.step) * a.step;
  a.ticks = static_cast<int>(std::lround((a.y1 - a.y0) / a.step));
  a.digits = std::max(0, static_cast<int>(-std::floor(std::log10(a.step) + 1e-9)));
  return a;
}

// Every x of every series once, ascending (the x-axis labels).
std::vector<double> distinct_x(const std::vector<Series>& series) {
  std::vector<double> xt;
  for (const auto& s : series) {
    for (auto [x, y] : s.points) xt.push_back(x);
  }
  std::sort(xt.begin(), xt.end());
  xt.erase(std::unique(xt.begin(), xt.end()), xt.end());
  return xt;
}

// A chart's plot area and scales: the data's range (x on a log2 scale when `logx`), the y axis
// rounded to nice ticks, and the maps from data to pixels.
struct ChartFrame {
  static constexpr double W = 720, H = 320, L = 60, R = 170, T = 30, B = 45;
  bool logx = false;
  double x0 = 1e300, x1 = -1e300;
  YAxis axis;
  double px(double x) const {
    return L + ((logx ? std::log2(x) : x) - x0) / (x1 - x0) * (W - L - R);
  }
  double py(double y) const { return H - B - (y - axis.y0) / (axis.y1 - axis.y0) * (H - T - B); }
};

ChartFrame chart_frame(const std::vector<Series>& series, bool logx) {
  ChartFrame f;
  f.logx = logx;
  double y0 = 1e300, y1 = -1e300;
  for (const auto& s : series) {
    for (auto [x, y] : s.points) {
      const double xv = logx ? std::log2(x) : x;
      f.x0 = std::min(f.x0, xv);
      f.x1 = std::max(f.x1, xv);
      y0 = std::min(y0, y);
      y1 = std::max(y1, y);
    }
  }
  if (f.x0 >= f.x1) f.x1 = f.x0 + 1;
  if (y0 >= y1) y1 = y0 + 1e-3;
  f.axis = nice_y_axis(y0, y1);
  return f;
}

// The title, both axes with their ticks and labels.
void draw_axes(std::ostringstream& o, const ChartFrame& f, const std::string& title,
               const std::string& xlabel, const std::string& ylabel,
               const std::vector<Series>& series) {
  const double W = f.W, H = f.H, L = f.L, R = f.R, T = f.T, B = f.B;
  o << fmt::format(R"(<text x="{}" y="18" font-size="14" font-weight="bold">{}</text>)", L,
                   esc(title));
  o << fmt::format(
      R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#444"/><line x1="{0}" y1="{3}" x2="{0}" y2="{1}" stroke="#444"/>)",
      L, H - B, W - R, T);
  for (int i = 0; i <= f.axis.ticks; ++i) {
    const double yv = f.axis.y0 + f.axis.step * i;
    o << fmt::format(
        R"(<line x1="{0}" y1="{1:.1f}" x2="{2}" y2="{1:.1f}" stroke="#eee"/><text x="{3}" y="{4:.1f}" font-size="11" text-anchor="end">{5:.{6}f}</text>)",
        L, f.py(yv), W - R, L - 6, f.py(yv) + 4, yv, f.axis.digits);
  }
  for (double x : distinct_x(series)) {
    o << fmt::format(R"(<text x="{:.1f}" y="{}" font-size="11" text-anchor="middle">{}</text>)",
                     f.px(x), H - B + 16,
                     x == std::floor(x) ? fmt::format("{}", static_cast<long long>(x))
                                        : fmt::format("{:.2f}", x));
  }
  o << fmt::format(R"(<text x="{}" y="{}" font-size="12" text-anchor="middle">{}</text>)",
                   (L + W - R) / 2, H - 8, esc(xlabel));
  o << fmt::format(
      R"svg(<text x="14" y="{}" font-size="12" transform="rotate(-90 14 {})" text-anchor="middle">{}</text>)svg",
      (T + H - B) / 2, (T + H - B) / 2, esc(ylabel));
}

// Each series: its line, its points (with their values as tooltips) and its legend entry.
void draw_series(std::ostringstream& o, const ChartFrame& f, const std::vector<Series>& series) {
  static const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
  for (std::size_t i = 0; i < series.size(); ++i) {
    const char* c = colors[i % 6];
    std::string pts;
    for (auto [x, y] : series[i].points) pts += fmt::format("{:.1f},{:.1f} ", f.px(x), f.py(y));
    o << fmt::format(R"(<polyline fill="none" stroke="{}" stroke-width="2" points="{}"/>)", c, pts);
    for (auto [x, y] : series[i].points) {
      o << fmt::format(
          R"(<circle cx="{:.1f}" cy="{:.1f}" r="3" fill="{}"><title>{}: {} = {:.4f}</title></circle>)",
          f.px(x), f.py(y), c, esc(series[i].name), x, y);
    }
    o << fmt::format(
        R"(<rect x="{}" y="{}" width="12" height="3" fill="{}"/><text x="{}" y="{}" font-size="12">{}</text>)",
        f.W - f.R + 10, f.T + 10 + 18.0 * static_cast<double>(i), c, f.W - f.R + 28,
        f.T + 14 + 18.0 * static_cast<double>(i), esc(series[i].name));
  }
}

std::string line_chart(const std::string& title, const std::string& xlabel,
                       const std::string& ylabel, const std::vector<Series>& series,
                       bool logx = false) {
  const ChartFrame f = chart_frame(series, logx);
  std::ostringstream o;
  o << fmt::format(
      R"(<figure><svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" role="img" aria-label="{}">)",
      f.W, f.H, esc(title));
  draw_axes(o, f, title, xlabel, ylabel, series);
  draw_series(o, f, series);
  o << "</svg></figure>";
  return o.str();
}

std::string table(const std::vector<std::string>& head,
                  const std::vector<std::vector<std::string>>& rows) {
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

std::string num(double v, int digits = 4) { return fmt::format("{:.{}f}", v, digits); }
std::string num(std::size_t v) { return std::to_string(v); }
std::string num(int v) { return std::to_string(v); }
std::string yes_no(bool v) { return v ? "yes" : "no"; }

std::string interval(const eval::Interval& i) {
  return fmt::format("{} [{}, {}]", num(i.mean), num(i.low), num(i.high));
}

std::string eval_sections(const EvalReport& r) {
  std::ostringstream o;
  std::vector<std::vector<std::string>> rows;
  for (const auto& m : r.ladder.methods) {
    rows.push_back({esc(m.name), interval(m.ndcg_at_10), interval(m.mrr_at_10),
                    interval(m.recall_at_10), interval(m.recall_at_100)});
  }
  o << "<h2>Quality ladder (95% bootstrap intervals)</h2>"
    << table({"method", "nDCG@10", "MRR@10", "Recall@10", "Recall@100"}, rows);
  if (r.encrypted) {
    const auto& e = *r.encrypted;
    o << "<h2>Encrypted rerank through a provider process</h2>"
      << table({"figure", "value"},
               {{"decision (margin " + num(e.margin, 3) + ")", "<b>" + esc(e.decision) + "</b>"},
                {"nDCG@10 CKKS / plaintext rerank",
                 num(e.ndcg10_ckks) + " / " + num(e.ndcg10_plaintext_rerank)},
                {"CKKS - plaintext nDCG@10 [95% CI]",
                 fmt::format("{} [{}, {}]", num(e.diff_mean, 5), num(e.diff_low, 5),
                             num(e.diff_high, 5))},
                {"exact top-10 order match", num(e.top10_order_match)},
                {"max / mean abs score error",
                 num(e.max_abs_error, 7) + " / " + num(e.mean_abs_error, 7)},
                {"end to end ms (median / p95)",
                 e.end_to_end_ms
                     ? num(e.end_to_end_ms->median, 1) + " / " + num(e.end_to_end_ms->p95, 1)
                     : "-"},
                {"queries, K", num(e.queries) + ", " + num(e.k)}});
  }
  return o.str();
}

std::string dimension_section(const eval::SweepResult& j) {
  Series exact{"exact projected", {}}, pqo{"PQ only", {}}, rr{"PQ + rerank (K=100)", {}};
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : j.dimension_curve) {
    const double d = static_cast<double>(c.dim);
    const auto& at100 = c.at_k.at(100);
    exact.points.push_back({d, c.ndcg10_exact_projected.test});
    pqo.points.push_back({d, c.ndcg10_pq_only.test});
    rr.points.push_back({d, at100.ndcg10_pq_rerank.test});
    rows.push_back({num(c.dim), num(c.pq_m.value_or(0)), num(c.ndcg10_exact_projected.test),
                    num(c.ndcg10_pq_only.test), num(at100.ndcg10_pq_rerank.test),
                    num(at100.candidate_recall_of_exact_top10.test)});
  }
  return "<h2>Quality by projected dimension (test split)</h2>" +
         line_chart("nDCG@10 by d' (M = d'/8)", "d' (log scale)", "nDCG@10", {exact, pqo, rr},
                    true) +
         table({"d'", "M", "exact projected", "PQ only", "PQ + rerank",
                "recall of exact top-10 in K=100"},
               rows);
}

std::string sweep_sections(const eval::SweepResult& j) {
  std::ostringstream o;
  o << dimension_section(j);
  Series kr{"PQ + rerank", {}}, krec{"candidate recall", {}};
  for (const auto& [k, at] : j.k_sweep.at_k) {  // std::map: ascending K
    kr.points.push_back({static_cast<double>(k), at.ndcg10_pq_rerank.test});
    krec.points.push_back({static_cast<double>(k), at.candidate_recall_of_exact_top10.test});
  }
  o << "<h2>K sweep</h2>"
    << line_chart("nDCG@10 and candidate recall by K", "K (log scale)", "value", {kr, krec}, true);
  std::vector<std::vector<std::string>> mrows;
  for (const auto& m : j.m_sensitivity) {
    mrows.push_back({num(m.pq_m.value_or(0)), num(m.ndcg10_pq_only.test),
                     num(m.at_k.at(100).ndcg10_pq_rerank.test)});
  }
  o << "<h2>PQ sensitivity to M</h2>" << table({"M", "PQ only", "PQ + rerank (K=100)"}, mrows);
  std::vector<std::vector<std::string>> prows;
  for (const auto& [name, p] : {std::pair<const char*, const eval::SweepPoint*>{
                                    "first_coordinates", &j.control_first_coordinates},
                                {"gaussian_orthoprojector", &j.control_gaussian},
                                {"svd", &j.control_svd}}) {
    prows.push_back(
        {name, num(p->ndcg10_exact_projected.test), num(p->ndcg10_exact_projected.validation)});
  }
  o << "<h2>Projection controls</h2>"
    << table({"projection", "exact projected nDCG@10 (test)", "(validation)"}, prows);
  return o.str();
}

std::string reconstruction_section(const eval::PqReconstruction& r) {
  auto row = [](const char* space, const eval::ReconstructionFidelity& s) {
    return std::vector<std::string>{space,
                                    num(s.cosine.mean),
                                    num(s.cosine.p05),
                                    num(s.cosine.p95),
                                    num(s.relative_l2.mean),
                                    num(s.rmse, 5)};
  };
  return "<h2>Public-PQ reconstruction (" + num(r.sample) + " documents)</h2>" +
         table({"space", "mean cosine", "p05", "p95", "mean relative L2", "RMSE"},
               {row("projected", r.projected), row("lifted", r.lifted)});
}

std::string leakage_section(const eval::AuditResult& a) {
  std::map<std::string, Series> auc;
  std::vector<std::vector<std::string>> rows;
  for (const auto& [k, estimators] : a.candidate_leakage) {  // std::map: ascending K
    const std::string key = "K=" + std::to_string(k);
    for (const auto& [name, m] : estimators) {
      auc[name].name = name;
      auc[name].points.push_back({static_cast<double>(k), m.link_auc});
      rows.push_back({esc(key), esc(name), num(m.cosine_mean), num(m.top10_overlap),
                      num(m.top100_overlap), num(m.hit10), num(m.link_auc),
                      num(m.link_tpr_at_1pct_fpr)});
    }
  }
  std::vector<Series> s;
  for (auto& [n, v] : auc) s.push_back(v);
  std::ostringstream o;
  o << "<h2>What the candidate IDs reveal</h2>"
    << "<p>Set linkability AUC (K = 100): <b>" << num(a.link_auc_set) << "</b>; with the "
    << "client's permutation: <b>" << num(a.link_auc_set_permuted)
    << "</b>. True-query Hit@10: " << num(a.true_query_hit10) << ".</p>"
    << line_chart("Linkability ROC AUC of two halves of one candidate list", "K (log scale)", "AUC",
                  s, true)
    << table({"K", "estimator", "cosine to query", "top-10 overlap", "top-100 overlap", "Hit@10",
              "link AUC", "TPR @1% FPR"},
             rows);
  return o.str();
}

std::string circuit_section(const CircuitAuditResult& c) {
  const auto& d = c.deterministic;
  const auto& f = c.rerandomized;
  std::ostringstream o;
  o << "<h2>Circuit-privacy boundary</h2>"
    << table({"figure", "value"}, {{"unique response hashes, one request x " + num(c.repeats),
                                    num(d.fixed_request_unique_response_hashes)},
                                   {"unique response hashes, fresh encryptions",
                                    num(d.fresh_encryption_unique_response_hashes)},
                                   {"explicit output sanitisation", yes_no(false)},
                                   {"max abs error", num(d.max_abs_error, 7)}});
  if (f.flood_security_bits > 0) {
    o << "<p>With the provider's re-randomization (<code>--flood-bits "
      << num(f.flood_security_bits) << "</code>): fresh encryption of zero under the "
      << "client's public key with flooding noise sized for statistical distance 2<sup>-"
      << num(f.flood_security_bits) << "</sup>.</p>"
      << table(
             {"figure", "deterministic", "re-randomized"},
             {{"unique response hashes, one request", num(d.fixed_request_unique_response_hashes),
               num(f.fixed_request_unique_response_hashes)},
              {"max abs error", num(d.max_abs_error, 7), num(f.max_abs_error, 7)},
              {"predicted precision (bits)", "-", num(f.predicted_precision_bits, 2)},
              {"provider ms (median)", num(d.provider_ms_median, 2), num(f.provider_ms_median, 2)},
              {"response bytes", num(d.response_bytes), num(f.response_bytes)},
              {"public key upload bytes", "0", num(f.public_key_bytes)}})
      << "<p>Largest flooding security the preset affords at d' = 672, K = 100: "
      << num(c.max_flood_bits_8bit_precision) << " bits with 8 bits of precision left, "
      << num(c.max_flood_bits_12bit_precision) << " bits with 12.</p>";
  }
  return o.str();
}

std::string extraction_section(const ExtractionResult& s) {
  return "<h2>Score-oracle extraction</h2>" +
         table({"figure", "value"},
               {{"mean cosine of recovered rows (budget disabled)", num(s.extraction_cosine, 10)},
                {"queries / bytes / seconds",
                 num(s.queries) + " / " + num(s.bytes) + " / " + num(s.seconds, 1)},
                {"default budget: answered before refusal", num(s.answered_before_refusal)},
                {"refused before a row completed", yes_no(s.extraction_refused)}});
}

std::string audit_sections(const AuditReport& r) {
  return reconstruction_section(r.audit.pq_reconstruction) + leakage_section(r.audit) +
         circuit_section(r.circuit) + (r.extraction ? extraction_section(*r.extraction) : "");
}

// The page around the sections: title, style, the environment table, the footer.
std::string page(const std::string& kind, const std::string& dataset, const std::string& sections,
                 std::vector<std::vector<std::string>> run_rows) {
  std::ostringstream o;
  const std::string title = "privsearch " + kind + " report: " + dataset;
  o << "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << esc(title)
    << "</title><style>body{font-family:system-ui,sans-serif;max-width:980px;margin:2em "
       "auto;padding:0 1.2em;"
       "color:#222;line-height:1.45}table{border-collapse:collapse;margin:.6em 0 "
       "1.4em}td,th{border:"
       "1px solid #ccc;padding:.25em .6em;text-align:right}th{background:#f3f3f3}td:first-child,"
       "th:first-child,td.t{text-align:left}figure{margin:.5em "
       "0}h2{margin-top:1.6em;border-bottom:1px "
       "solid #ddd}code{background:#f6f6f6}</style></head><body>";
  o << "<h1>" << esc(title) << "</h1>" << sections;
  std::vector<std::vector<std::string>> rows;
  const auto env = machine_description();  // kept alive: items() refers into it
  for (auto& [k, v] : env.items()) rows.push_back({esc(k), num(v)});
  rows.insert(rows.end(), run_rows.begin(), run_rows.end());
  o << "<h2>Environment</h2>" << table({"item", "value"}, rows);
  o << "<p>Generated by <code>privsearch " << esc(kind == "sweep" ? "eval --sweep" : kind)
    << "</code>; the complete figures are in the command's JSON output.</p></body></html>\n";
  return o.str();
}

}  // namespace

std::string render_report_html(const EvalReport& r) {
  std::vector<std::vector<std::string>> run = {
      {"encoder", esc(r.ladder.encoder_id)},
      {"dim", num(r.ladder.dim)},
      {"pq_m", num(r.ladder.pq_m)},
      {"k", num(r.ladder.k)},
      {"queries",
       num(r.ladder.methods.empty() ? std::size_t{0} : r.ladder.methods[0].per_query.size())}};
  if (r.encrypted) run.push_back({"artifact version", esc(r.encrypted->artifact_version)});
  return page("eval", r.dataset, eval_sections(r), run);
}

std::string render_report_html(const SweepReport& r) {
  return page("sweep", r.dataset, sweep_sections(r.sweep),
              {{"encoder", esc(r.sweep.encoder)},
               {"queries", num(r.sweep.validation_queries) + " validation, " +
                               num(r.sweep.test_queries) + " test"}});
}

std::string render_report_html(const AuditReport& r) {
  const auto& a = r.audit;
  return page("audit", r.dataset, audit_sections(r),
              {{"encoder", esc(a.encoder)},
               {"seed", std::to_string(a.seed)},
               {"dim", num(a.dim)},
               {"pq_m", num(a.pq_m)},
               {"documents", num(a.documents)},
               {"queries", num(a.queries)}});
}

template <typename Report>
Status write_report_html(const std::filesystem::path& file, const Report& report) {
  return index::write_bytes_atomically(file, byte_view(render_report_html(report)));
}
template Status write_report_html(const std::filesystem::path&, const EvalReport&);
template Status write_report_html(const std::filesystem::path&, const SweepReport&);
template Status write_report_html(const std::filesystem::path&, const AuditReport&);

}  // namespace privsearch::tools
