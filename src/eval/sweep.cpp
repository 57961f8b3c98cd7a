#include "eval/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>

#include "core/sha256.h"
#include "eval/metrics.h"
#include "index/candidates/pq.h"
#include "index/candidates/pq_scan.h"
#include "index/candidates/projection.h"
#include "index/encoders/lexical_encoder.h"

namespace privsearch::eval {
namespace {

struct Split {
  std::vector<double> validation, test;
  void add(bool val, double v) { (val ? validation : test).push_back(v); }
  SplitMean mean() const {
    auto m = [](const std::vector<double>& v) {
      return v.empty() ? 0.0
                       : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    };
    return {m(validation), m(test)};
  }
};

nlohmann::json split_json(const SplitMean& m) {
  return {{"validation", m.validation}, {"test", m.test}};
}

nlohmann::json point_json(const SweepPoint& p) {
  nlohmann::json j;
  j["dim"] = p.dim;
  j["ndcg@10_exact_projected"] = split_json(p.ndcg10_exact_projected);
  if (p.pq_m) {
    j["pq_m"] = *p.pq_m;
    j["ndcg@10_pq_only"] = split_json(p.ndcg10_pq_only);
    for (const auto& [k, at] : p.at_k) {
      j["K=" + std::to_string(k)] = {
          {"ndcg@10_pq_rerank", split_json(at.ndcg10_pq_rerank)},
          {"candidate_recall_of_exact_top10", split_json(at.candidate_recall_of_exact_top10)}};
    }
  }
  if (p.share_of_fitted_energy) j["share_of_fitted_energy"] = *p.share_of_fitted_energy;
  return j;
}

// Judged queries, their encoder vectors and split.
struct SweepQuery {
  const index::Query* q;
  std::vector<float> v;
  bool val;
};

// Everything at one projection: exact projected scores per query, PQ at (M, K list).
class SweepEvaluator {
 public:
  SweepEvaluator(const index::Collection& c, const index::Matrix& docs,
                 const std::vector<SweepQuery>& queries, std::uint64_t seed)
      : c_(c), docs_(docs), queries_(queries), seed_(seed) {}

  Result<SweepPoint> evaluate(const index::Projection& proj, std::size_t dim, std::size_t m,
                              const std::vector<std::size_t>& ks, bool with_pq) const;

 private:
  std::vector<std::string> ids_of(const std::vector<std::size_t>& order) const {
    std::vector<std::string> r;
    for (auto i : order) r.push_back(c_.corpus[i].id);
    return r;
  }
  const index::Collection& c_;
  const index::Matrix& docs_;
  const std::vector<SweepQuery>& queries_;
  std::uint64_t seed_;
};

Result<SweepPoint> SweepEvaluator::evaluate(const index::Projection& proj, std::size_t dim,
                                            std::size_t m, const std::vector<std::size_t>& ks,
                                            bool with_pq) const {
  const auto x = proj.project_documents(docs_, dim);
  std::optional<index::PqArtifact> pq;
  std::optional<index::PqScanner> scanner;
  if (with_pq) {
    index::PqOptions po;
    po.m = m;
    po.seed = seed_;
    PRIVSEARCH_ASSIGN_OR_RETURN(auto a, index::build_pq(x, po));
    pq.emplace(std::move(a));
    auto s = index::PqScanner::create(*pq);
    if (s.ok()) scanner.emplace(std::move(s).value());  // else the portable scan below
  }
  Split exact, pq_only;
  std::map<std::size_t, Split> rerank, recall;
  for (const auto& q : queries_) {
    const auto& judged = c_.qrels.at(q.q->id);
    const auto z = proj.project_query(q.v, dim);
    std::vector<double> s(x.rows);
    for (std::size_t i = 0; i < x.rows; ++i) {
      double t = 0;
      const float* row = x.row(i);
      for (std::size_t j = 0; j < dim; ++j) t += static_cast<double>(z[j]) * row[j];
      s[i] = t;
    }
    const auto top = top_indices(s, 100);
    exact.add(q.val, ndcg_at(ids_of(top), judged, 10));
    if (!with_pq) continue;
    const std::size_t kmax = *std::max_element(ks.begin(), ks.end());
    PRIVSEARCH_ASSIGN_OR_RETURN(
        const auto cand, scanner ? scanner->search(z, kmax) : index::pq_search(*pq, z, kmax));
    std::vector<std::size_t> order(cand.begin(), cand.end());
    pq_only.add(q.val, ndcg_at(ids_of(order), judged, 10));
    for (const std::size_t k : ks) {
      std::vector<std::size_t> sub(
          order.begin(), order.begin() + static_cast<std::ptrdiff_t>(std::min(k, order.size())));
      std::vector<std::size_t> re = sub;
      std::stable_sort(re.begin(), re.end(),
                       [&](std::size_t a, std::size_t b) { return s[a] > s[b]; });
      rerank[k].add(q.val, ndcg_at(ids_of(re), judged, 10));
      std::size_t hit = 0;
      for (std::size_t i = 0; i < std::min<std::size_t>(10, top.size()); ++i) {
        hit += std::find(sub.begin(), sub.end(), top[i]) != sub.end() ? 1 : 0;
      }
      recall[k].add(q.val, static_cast<double>(hit) / 10.0);
    }
  }
  SweepPoint p;
  p.dim = dim;
  p.ndcg10_exact_projected = exact.mean();
  if (with_pq) {
    p.pq_m = m;
    p.ndcg10_pq_only = pq_only.mean();
    for (const std::size_t k : ks) p.at_k[k] = {rerank[k].mean(), recall[k].mean()};
  }
  return p;
}

}  // namespace

bool is_validation_query(const std::string& id, std::uint64_t seed) {
  Sha256 h;
  h.update(std::string_view("privsearch-split"));
  std::uint8_t s[8];
  for (int i = 0; i < 8; ++i) s[i] = static_cast<std::uint8_t>(seed >> (8 * i));
  h.update(std::span<const std::uint8_t>(s, 8));
  h.update(std::string_view(id));
  const auto d = h.finish();
  std::uint64_t v = 0;
  std::memcpy(&v, d.data(), 8);
  return v % 4 == 0;
}

Result<SweepResult> run_sweep(const index::Collection& c, const SweepOptions& o,
                              const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& s) {
    if (progress) progress(s);
  };
  if (c.corpus.size() < 256) return invalid_argument_error("the sweep needs >= 256 documents (PQ)");
  say(fmt::format("fitting the lexical encoder on {} documents", c.corpus.size()));
  const auto [encoder, docs] = index::fit_and_encode(c.corpus);
  std::vector<std::size_t> dims;
  for (const std::size_t d : o.dims) {
    if (d >= 8 && d <= encoder.dim()) dims.push_back(d);
  }
  if (dims.empty()) return invalid_argument_error("no sweep dimension fits the encoder");
  std::sort(dims.begin(), dims.end());
  const std::size_t top_dim = dims.back();
  say(fmt::format("fitting one SVD to d' = {} (nested prefixes)", top_dim));
  index::SvdOptions so;
  so.seed = o.seed;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto svd, index::fit_svd(docs, top_dim, so));
  std::vector<SweepQuery> queries;
  SweepResult out;
  out.encoder = encoder.id();
  for (const auto& q : c.queries) {
    if (c.qrels.count(q.id) == 0) continue;
    queries.push_back({&q, encoder.encode_query(q.text), is_validation_query(q.id, o.seed)});
    out.validation_queries += queries.back().val ? 1 : 0;
  }
  out.test_queries = queries.size() - out.validation_queries;
  const SweepEvaluator ev(c, docs, queries, o.seed);

  say("nested SVD dimensions and the joint PQ curve (M = d'/8)");
  double total = 0;
  for (const double v : svd.singular_values) total += v * v;
  for (const std::size_t d : dims) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto p,
                                ev.evaluate(svd, d, index::default_pq_m(d, 8), {100}, true));
    double kept = 0;
    for (std::size_t i = 0; i < std::min(d, svd.singular_values.size()); ++i) {
      kept += svd.singular_values[i] * svd.singular_values[i];
    }
    p.share_of_fitted_energy = total > 0 ? kept / total : 0.0;
    out.dimension_curve.push_back(std::move(p));
    say(fmt::format("  d' = {} done", d));
  }
  out.svd_retained_variance_top_dim = svd.retained_variance;
  say(fmt::format("K sweep at d' = {}", top_dim));
  PRIVSEARCH_ASSIGN_OR_RETURN(
      out.k_sweep, ev.evaluate(svd, top_dim, index::default_pq_m(top_dim, 8), o.ks, true));
  say("M sensitivity");
  for (const std::size_t div : {16u, 8u, 4u, 2u}) {
    PRIVSEARCH_ASSIGN_OR_RETURN(
        auto p, ev.evaluate(svd, top_dim, index::default_pq_m(top_dim, div), {100}, true));
    out.m_sensitivity.push_back(std::move(p));
  }
  say("projection controls");
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto first, index::first_coordinates(docs, top_dim));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto gauss,
                              index::gaussian_orthoprojector(docs, top_dim, o.seed));
  PRIVSEARCH_ASSIGN_OR_RETURN(out.control_svd, ev.evaluate(svd, top_dim, 0, {}, false));
  PRIVSEARCH_ASSIGN_OR_RETURN(out.control_first_coordinates,
                              ev.evaluate(first, top_dim, 0, {}, false));
  PRIVSEARCH_ASSIGN_OR_RETURN(out.control_gaussian, ev.evaluate(gauss, top_dim, 0, {}, false));
  return out;
}

nlohmann::json SweepResult::to_json() const {
  nlohmann::json out;
  out["suite"] = "sweep";
  out["encoder"] = encoder;
  out["queries"] = {{"validation", validation_queries}, {"test", test_queries}};
  out["split"] = "SHA-256(privsearch-split | seed | query id) mod 4 == 0 -> validation";
  nlohmann::json curve = nlohmann::json::array();
  for (const auto& p : dimension_curve) curve.push_back(point_json(p));
  out["dimension_curve"] = curve;
  out["svd_retained_variance_top_dim"] = svd_retained_variance_top_dim;
  out["k_sweep"] = point_json(k_sweep);
  nlohmann::json msens = nlohmann::json::array();
  for (const auto& p : m_sensitivity) msens.push_back(point_json(p));
  out["m_sensitivity"] = msens;
  out["projection_controls"] = {{"svd", point_json(control_svd)},
                                {"first_coordinates", point_json(control_first_coordinates)},
                                {"gaussian_orthoprojector", point_json(control_gaussian)}};
  return out;
}

}  // namespace privsearch::eval
