#include "eval/sweep.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "core/sha256.h"
#include "eval/metrics.h"
#include "index/lexical_encoder.h"
#include "index/pq.h"
#include "index/pq_scan.h"
#include "index/projection.h"

namespace privsearch::eval {
namespace {


struct Split {
  std::vector<double> validation, test;
  void add(bool val, double v) { (val ? validation : test).push_back(v); }
  nlohmann::json json() const {
    auto mean = [](const std::vector<double>& v) {
      return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    };
    return {{"validation", mean(validation)}, {"test", mean(test)}};
  }
};

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

Result<nlohmann::json> run_sweep(const index::Collection& c, const SweepOptions& o,
                                 const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& s) {
    if (progress) progress(s);
  };
  if (c.corpus.size() < 256) return invalid_argument_error("the sweep needs >= 256 documents (PQ)");
  say(fmt::format("fitting the lexical encoder on {} documents", c.corpus.size()));
  const auto [encoder, docs] = index::fit_and_encode(c.corpus);
  const std::size_t raw_dim = encoder.dim();
  std::vector<std::size_t> dims;
  for (std::size_t d : o.dims) {
    if (d >= 8 && d <= raw_dim) dims.push_back(d);
  }
  if (dims.empty()) return invalid_argument_error("no sweep dimension fits the encoder");
  std::sort(dims.begin(), dims.end());
  const std::size_t top_dim = dims.back();
  say(fmt::format("fitting one SVD to d' = {} (nested prefixes)", top_dim));
  index::SvdOptions so;
  so.seed = o.seed;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto svd, index::fit_svd(docs, top_dim, so));

  // Judged queries, their encoder vectors and split.
  struct Q { const index::Query* q; std::vector<float> v; bool val; };
  std::vector<Q> queries;
  std::size_t nval = 0;
  for (const auto& q : c.queries) {
    if (c.qrels.count(q.id) == 0) continue;
    queries.push_back({&q, encoder.encode_query(q.text), is_validation_query(q.id, o.seed)});
    nval += queries.back().val ? 1 : 0;
  }
  nlohmann::json out;
  out["suite"] = "sweep";
  out["encoder"] = encoder.id();
  out["queries"] = {{"validation", nval}, {"test", queries.size() - nval}};
  out["split"] = "SHA-256(privsearch-split | seed | query id) mod 4 == 0 -> validation";
  auto ids_of = [&](const std::vector<std::size_t>& order) {
    std::vector<std::string> r;
    for (auto i : order) r.push_back(c.corpus[i].id);
    return r;
  };
  // Everything at one projection: exact projected scores per query, PQ at (m, k list).
  auto evaluate = [&](const index::Projection& proj, std::size_t dim, std::size_t m,
                      const std::vector<std::size_t>& ks, bool with_pq) -> Result<nlohmann::json> {
    const auto x = proj.project_documents(docs, dim);
    std::optional<index::PqArtifact> pq;
    std::optional<index::PqScanner> scanner;
    if (with_pq) {
      index::PqOptions po;
      po.m = m;
      po.seed = o.seed;
      PRIVSEARCH_ASSIGN_OR_RETURN(auto a, index::build_pq(x, po));
      pq.emplace(std::move(a));
      auto s = index::PqScanner::create(*pq);
      if (s.ok()) scanner.emplace(std::move(s).value());  // else the portable scan below
    }
    Split exact, pq_only;
    std::map<std::size_t, Split> rerank, recall;
    for (const auto& q : queries) {
      const auto& judged = c.qrels.at(q.q->id);
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
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto cand, scanner ? scanner->search(z, kmax)
                                                           : index::pq_search(*pq, z, kmax));
      std::vector<std::size_t> order(cand.begin(), cand.end());
      pq_only.add(q.val, ndcg_at(ids_of(order), judged, 10));
      for (std::size_t k : ks) {
        std::vector<std::size_t> sub(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(std::min(k, order.size())));
        std::vector<std::size_t> re = sub;
        std::stable_sort(re.begin(), re.end(), [&](std::size_t a, std::size_t b) { return s[a] > s[b]; });
        rerank[k].add(q.val, ndcg_at(ids_of(re), judged, 10));
        std::size_t hit = 0;
        for (std::size_t i = 0; i < std::min<std::size_t>(10, top.size()); ++i) {
          hit += std::find(sub.begin(), sub.end(), top[i]) != sub.end() ? 1 : 0;
        }
        recall[k].add(q.val, static_cast<double>(hit) / 10.0);
      }
    }
    nlohmann::json j;
    j["dim"] = dim;
    j["ndcg@10_exact_projected"] = exact.json();
    if (with_pq) {
      j["pq_m"] = m;
      j["ndcg@10_pq_only"] = pq_only.json();
      for (std::size_t k : ks) {
        j["K=" + std::to_string(k)] = {{"ndcg@10_pq_rerank", rerank[k].json()},
                                       {"candidate_recall_of_exact_top10", recall[k].json()}};
      }
    }
    return j;
  };

  say("nested SVD dimensions and the joint PQ curve (M = d'/8)");
  nlohmann::json curve = nlohmann::json::array();
  for (std::size_t d : dims) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto j, evaluate(svd, d, index::default_pq_m(d, 8), {100}, true));
    double kept = 0, total = 0;
    for (std::size_t i = 0; i < svd.singular_values.size(); ++i) {
      const double e = svd.singular_values[i] * svd.singular_values[i];
      total += e;
      if (i < d) kept += e;
    }
    j["share_of_fitted_energy"] = total > 0 ? kept / total : 0.0;
    curve.push_back(j);
    say(fmt::format("  d' = {} done", d));
  }
  out["dimension_curve"] = curve;
  out["svd_retained_variance_top_dim"] = svd.retained_variance;
  say(fmt::format("K sweep at d' = {}", top_dim));
  PRIVSEARCH_ASSIGN_OR_RETURN(out["k_sweep"], evaluate(svd, top_dim, index::default_pq_m(top_dim, 8), o.ks, true));
  say("M sensitivity");
  nlohmann::json msens = nlohmann::json::array();
  for (std::size_t div : {16u, 8u, 4u, 2u}) {
    const std::size_t m = index::default_pq_m(top_dim, div);
    PRIVSEARCH_ASSIGN_OR_RETURN(auto j, evaluate(svd, top_dim, m, {100}, true));
    msens.push_back(j);
  }
  out["m_sensitivity"] = msens;
  say("projection controls");
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto first, index::first_coordinates(docs, top_dim));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto gauss, index::gaussian_orthoprojector(docs, top_dim, o.seed));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto jsvd, evaluate(svd, top_dim, 0, {}, false));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto jfirst, evaluate(first, top_dim, 0, {}, false));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto jgauss, evaluate(gauss, top_dim, 0, {}, false));
  out["projection_controls"] = {{"svd", jsvd}, {"first_coordinates", jfirst},
                                {"gaussian_orthoprojector", jgauss}};
  return out;
}

}  // namespace privsearch::eval
