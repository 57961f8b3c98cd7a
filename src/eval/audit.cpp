#include "eval/audit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "core/csprng.h"
#include "eval/leakage.h"
#include "eval/metrics.h"
#include "index/lexical_encoder.h"
#include "index/pq.h"
#include "index/pq_scan.h"
#include "index/projection.h"

namespace privsearch::eval {
namespace {

nlohmann::json dist_json(const Distribution& d) {
  auto r = [](double v) { return std::round(v * 1e6) / 1e6; };
  return {{"mean", r(d.mean)}, {"std", r(d.std)},   {"p01", r(d.p01)},
          {"p05", r(d.p05)},   {"median", r(d.median)}, {"p95", r(d.p95)},
          {"p99", r(d.p99)},   {"min", r(d.min)},   {"max", r(d.max)}};
}

double overlap(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b,
               std::size_t n) {
  std::vector<std::size_t> x(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(std::min(n, a.size())));
  std::vector<std::size_t> y(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(std::min(n, b.size())));
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  std::vector<std::size_t> both;
  std::set_intersection(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(both));
  return static_cast<double>(both.size()) / static_cast<double>(n);
}

}  // namespace

Result<nlohmann::json> run_audit(const index::Collection& c, const AuditOptions& o,
                                 const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& s) {
    if (progress) progress(s);
  };
  if (c.corpus.size() < 4 || c.queries.empty()) {
    return invalid_argument_error("the audit needs at least 4 documents and judged queries");
  }
  for (std::size_t k : o.ks) {
    if (k < 4 || k > c.corpus.size()) {
      return invalid_argument_error("audit `K` = " + std::to_string(k) + " must be in [4, " +
                                    std::to_string(c.corpus.size()) + "]");
    }
  }
  say(fmt::format("fitting the lexical encoder on {} documents", c.corpus.size()));
  const auto [encoder, docs] = index::fit_and_encode(c.corpus);
  const std::size_t raw_dim = encoder.dim();
  const std::size_t dim = std::min(o.dim, raw_dim);
  say(fmt::format("fitting the SVD projection {} -> {}", raw_dim, dim));
  index::SvdOptions so;
  so.seed = 1;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto proj, index::fit_svd(docs, dim, so));
  const auto x = proj.project_documents(docs);
  const std::size_t m = o.pq_m != 0 ? o.pq_m : index::default_pq_m(dim);
  say(fmt::format("training PQ (M = {})", m));
  index::PqOptions po;
  po.m = m;
  po.seed = 1;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto pq, index::build_pq(x, po));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto scanner, index::PqScanner::create(pq));

  nlohmann::json out;
  out["suite"] = "audit";
  out["encoder"] = encoder.id();
  out["dim"] = dim;
  out["pq_m"] = m;
  out["documents"] = c.corpus.size();
  out["seed"] = o.seed;

  // --- public-PQ reconstruction ---------------------------------------------------------------
  say("public-PQ reconstruction");
  Prng prng = Prng::from_seed(Seed{static_cast<std::uint8_t>(o.seed & 0xff)}, o.seed);
  std::vector<std::size_t> sample(c.corpus.size());
  std::iota(sample.begin(), sample.end(), 0);
  const std::size_t ns = std::min(o.reconstruction_sample, sample.size());
  for (std::size_t i = 0; i < ns; ++i) {  // seeded partial Fisher-Yates
    std::swap(sample[i], sample[i + prng.uniform_below(sample.size() - i)]);
  }
  sample.resize(ns);
  std::sort(sample.begin(), sample.end());
  std::vector<double> pcos, prel, lcos, lrel;
  double psq = 0, lsq = 0;
  std::size_t pcount = 0, lcount = 0;
  for (std::size_t id : sample) {
    const auto rec = index::pq_decode(pq.codebook, pq.codes.data() + id * pq.codebook.m);
    std::vector<double> r(rec.begin(), rec.end()), e(x.row(id), x.row(id) + dim);
    pcos.push_back(cosine(r, e));
    double err = 0, nn = 0;
    for (std::size_t j = 0; j < dim; ++j) {
      err += (r[j] - e[j]) * (r[j] - e[j]);
      nn += e[j] * e[j];
    }
    psq += err;
    pcount += dim;
    prel.push_back(nn > 0 ? std::sqrt(err / nn) : 0);
    // Lift: recon V^T + mu (basis layout input_dim x output_dim).
    std::vector<double> lifted(raw_dim), raw(docs.row(id), docs.row(id) + raw_dim);
    for (std::size_t i = 0; i < raw_dim; ++i) {
      double s = proj.mean[i];
      for (std::size_t j = 0; j < dim; ++j) s += proj.basis[i * proj.output_dim + j] * r[j];
      lifted[i] = s;
    }
    lcos.push_back(cosine(lifted, raw));
    double lerr = 0, ln = 0;
    for (std::size_t i = 0; i < raw_dim; ++i) {
      lerr += (lifted[i] - raw[i]) * (lifted[i] - raw[i]);
      ln += raw[i] * raw[i];
    }
    lsq += lerr;
    lcount += raw_dim;
    lrel.push_back(ln > 0 ? std::sqrt(lerr / ln) : 0);
  }
  out["pq_reconstruction"] = {
      {"sample", ns},
      {"projected", {{"cosine", dist_json(describe(pcos))},
                     {"relative_l2", dist_json(describe(prel))},
                     {"rmse", std::sqrt(psq / static_cast<double>(pcount))}}},
      {"lifted", {{"cosine", dist_json(describe(lcos))},
                  {"relative_l2", dist_json(describe(lrel))},
                  {"rmse", std::sqrt(lsq / static_cast<double>(lcount))}}},
      {"bytes_per_document", {{"raw_float32", raw_dim * 4}, {"projected_float32", dim * 4},
                              {"pq_code", m}}}};
  out["pq_lifted_cosine_mean"] = describe(lcos).mean;
  out["pq_projected_cosine_mean"] = describe(pcos).mean;

  // --- candidate-ID leakage -------------------------------------------------------------------
  std::vector<const index::Query*> queries;
  for (const auto& q : c.queries) {
    if (c.qrels.count(q.id) != 0) queries.push_back(&q);
  }
  if (o.max_queries != 0 && queries.size() > o.max_queries) queries.resize(o.max_queries);
  if (queries.size() < 3) return invalid_argument_error("the audit needs at least 3 judged queries");
  out["queries"] = queries.size();
  say(fmt::format("candidate-ID leakage over {} queries, K in {}", queries.size(),
                  fmt::join(o.ks, ", ")));
  const std::size_t n = c.corpus.size();
  auto exact_scores = [&](const Vec& q) {
    std::vector<double> s(n);
    for (std::size_t i = 0; i < n; ++i) {
      const float* row = x.row(i);
      double t = 0;
      for (std::size_t j = 0; j < dim; ++j) t += q[j] * row[j];
      s[i] = t;
    }
    return s;
  };
  // True projected queries and their exhaustive rankings (once).
  std::vector<Vec> z(queries.size());
  std::vector<std::vector<std::size_t>> true_top(queries.size());
  double true_hit10 = 0;
  auto hit10 = [&](const std::vector<std::size_t>& top, const index::Query& q) {
    const auto& judged = c.qrels.at(q.id);
    for (std::size_t i = 0; i < std::min<std::size_t>(10, top.size()); ++i) {
      auto it = judged.find(c.corpus[top[i]].id);
      if (it != judged.end() && it->second > 0) return 1.0;
    }
    return 0.0;
  };
  for (std::size_t qi = 0; qi < queries.size(); ++qi) {
    const auto zf = proj.project_query(encoder.encode_query(queries[qi]->text));
    z[qi] = unit(Vec(zf.begin(), zf.end()));
    true_top[qi] = top_indices(exact_scores(z[qi]), 100);
    true_hit10 += hit10(true_top[qi], *queries[qi]);
  }
  out["true_query_hit10"] = true_hit10 / static_cast<double>(queries.size());
  nlohmann::json per_k = nlohmann::json::object();
  for (std::size_t k : o.ks) {
    struct Acc { std::vector<double> cos, top10, top100, hit; };
    std::map<std::string, Acc> acc;
    // Linkability views per estimator: A_i and B_i.
    std::map<std::string, std::pair<std::vector<Vec>, std::vector<Vec>>> views;
    Prng shuffle = Prng::from_seed(Seed{static_cast<std::uint8_t>(k & 0xff)}, o.seed + k);
    for (std::size_t qi = 0; qi < queries.size(); ++qi) {
      std::vector<float> zq(z[qi].begin(), z[qi].end());
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto cand, scanner.search(zq, k));
      auto rows_of = [&](const std::vector<std::uint32_t>& ids) {
        std::vector<double> rows(ids.size() * dim);
        for (std::size_t r = 0; r < ids.size(); ++r) {
          std::copy(x.row(ids[r]), x.row(ids[r]) + dim, rows.begin() + static_cast<std::ptrdiff_t>(r * dim));
        }
        return rows;
      };
      std::vector<std::uint32_t> ordered(cand.begin(), cand.end());
      std::vector<std::uint32_t> permuted = ordered;
      for (std::size_t i = permuted.size(); i > 1; --i) {
        std::swap(permuted[i - 1], permuted[shuffle.uniform_below(i)]);
      }
      struct Variant { const char* name; const std::vector<std::uint32_t>* ids; int estimator; };
      const Variant variants[] = {{"centroid", &ordered, 0},     {"log_rank", &ordered, 1},
                                  {"ridge", &ordered, 2},        {"log_rank_permuted", &permuted, 1},
                                  {"ridge_permuted", &permuted, 2}};
      for (const auto& v : variants) {
        const auto rows = rows_of(*v.ids);
        auto estimate = [&](const std::vector<double>& r, std::size_t kk) {
          return v.estimator == 0 ? centroid_estimate(r, kk, dim)
                 : v.estimator == 1 ? log_rank_estimate(r, kk, dim)
                                    : ridge_rank_estimate(r, kk, dim);
        };
        const Vec est = estimate(rows, v.ids->size());
        const auto top = top_indices(exact_scores(est), 100);
        auto& a = acc[v.name];
        a.cos.push_back(cosine(est, z[qi]));
        a.top10.push_back(overlap(top, true_top[qi], 10));
        a.top100.push_back(overlap(top, true_top[qi], 100));
        a.hit.push_back(hit10(top, *queries[qi]));
        // Disjoint alternating halves.
        std::vector<std::uint32_t> ha, hb;
        for (std::size_t r = 0; r < v.ids->size(); ++r) (r % 2 == 0 ? ha : hb).push_back((*v.ids)[r]);
        auto& vw = views[v.name];
        vw.first.push_back(estimate(rows_of(ha), ha.size()));
        vw.second.push_back(estimate(rows_of(hb), hb.size()));
      }
    }
    nlohmann::json kj;
    for (auto& [name, a] : acc) {
      auto mean = [](const std::vector<double>& v) {
        return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
      };
      const auto& vw = views[name];
      std::vector<double> pos, neg;
      const std::size_t nq = vw.first.size();
      for (std::size_t i = 0; i < nq; ++i) pos.push_back(cosine(vw.first[i], vw.second[i]));
      Prng lr = Prng::from_seed(Seed{0x11}, o.seed + k);
      const std::size_t shifts = std::min<std::size_t>(10, nq - 1);
      for (std::size_t s = 0; s < shifts; ++s) {
        const std::size_t shift = 1 + lr.uniform_below(nq - 1);
        for (std::size_t i = 0; i < nq; ++i) {
          neg.push_back(cosine(vw.first[i], vw.second[(i + shift) % nq]));
        }
      }
      kj[name] = {{"cosine_mean", mean(a.cos)},        {"top10_overlap", mean(a.top10)},
                  {"top100_overlap", mean(a.top100)},  {"hit10", mean(a.hit)},
                  {"link_auc", roc_auc(pos, neg)},     {"link_tpr_at_1pct_fpr", tpr_at_fpr(pos, neg, 0.01)},
                  {"link_positive_cosine", dist_json(describe(pos))},
                  {"link_negative_cosine", dist_json(describe(neg))}};
    }
    per_k["K=" + std::to_string(k)] = kj;
    if (k == 100 || (k == o.ks.back() && !out.contains("link_auc_set"))) {
      out["link_auc_set"] = kj["centroid"]["link_auc"];
    }
  }
  out["candidate_leakage"] = per_k;
  // Set-only linkability with the client's permutation: the halves of a permuted list are
  // random halves; the centroid is order-free, so measure it on permuted halves directly.
  {
    const std::size_t k = std::find(o.ks.begin(), o.ks.end(), 100) != o.ks.end() ? 100 : o.ks.back();
    std::vector<Vec> va, vb;
    Prng shuffle = Prng::from_seed(Seed{0x22}, o.seed);
    for (std::size_t qi = 0; qi < queries.size(); ++qi) {
      std::vector<float> zq(z[qi].begin(), z[qi].end());
      PRIVSEARCH_ASSIGN_OR_RETURN(auto cand, scanner.search(zq, k));
      for (std::size_t i = cand.size(); i > 1; --i) std::swap(cand[i - 1], cand[shuffle.uniform_below(i)]);
      std::vector<double> ra, rb;
      for (std::size_t r = 0; r < cand.size(); ++r) {
        auto& dst = r % 2 == 0 ? ra : rb;
        dst.insert(dst.end(), x.row(cand[r]), x.row(cand[r]) + dim);
      }
      va.push_back(centroid_estimate(ra, ra.size() / dim, dim));
      vb.push_back(centroid_estimate(rb, rb.size() / dim, dim));
    }
    std::vector<double> pos, neg;
    for (std::size_t i = 0; i < va.size(); ++i) pos.push_back(cosine(va[i], vb[i]));
    Prng lr = Prng::from_seed(Seed{0x33}, o.seed);
    for (std::size_t s = 0; s < std::min<std::size_t>(10, va.size() - 1); ++s) {
      const std::size_t shift = 1 + lr.uniform_below(va.size() - 1);
      for (std::size_t i = 0; i < va.size(); ++i) neg.push_back(cosine(va[i], vb[(i + shift) % va.size()]));
    }
    out["link_auc_set_permuted"] = roc_auc(pos, neg);
    out["link_auc_set_permuted_k"] = k;
  }
  out["not_covered"] = {"score-oracle extraction (privsearch audit --extraction)",
                        "response re-randomization (noise flooding) option"};
  return out;
}

}  // namespace privsearch::eval
