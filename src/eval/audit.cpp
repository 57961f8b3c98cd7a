#include "eval/audit.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>

#include "core/csprng.h"
#include "eval/leakage.h"
#include "eval/metrics.h"
#include "index/candidates/pq.h"
#include "index/candidates/pq_scan.h"
#include "index/candidates/projection.h"
#include "index/encoders/lexical_encoder.h"

namespace privsearch::eval {
namespace {

using Progress = std::function<void(const std::string&)>;

nlohmann::json dist_json(const Distribution& d) {
  auto r = [](double v) { return std::round(v * 1e6) / 1e6; };
  return {{"mean", r(d.mean)}, {"std", r(d.std)},       {"p01", r(d.p01)},
          {"p05", r(d.p05)},   {"median", r(d.median)}, {"p95", r(d.p95)},
          {"p99", r(d.p99)},   {"min", r(d.min)},       {"max", r(d.max)}};
}

double overlap(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b,
               std::size_t n) {
  std::vector<std::size_t> x(a.begin(),
                             a.begin() + static_cast<std::ptrdiff_t>(std::min(n, a.size())));
  std::vector<std::size_t> y(b.begin(),
                             b.begin() + static_cast<std::ptrdiff_t>(std::min(n, b.size())));
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  std::vector<std::size_t> both;
  std::set_intersection(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(both));
  return static_cast<double>(both.size()) / static_cast<double>(n);
}

// The index the audit attacks: the built-in encoder, the SVD projection, the PQ artifact.
struct AuditIndex {
  index::LexicalEncoder encoder;
  index::Matrix docs;  // encoder space
  index::Projection proj;
  index::Matrix x;  // projected rows
  std::size_t raw_dim = 0, dim = 0, m = 0;
  index::PqArtifact pq;
};

Result<AuditIndex> build_audit_index(const index::Collection& c, const AuditOptions& o,
                                     const Progress& say) {
  say(fmt::format("fitting the lexical encoder on {} documents", c.corpus.size()));
  auto [encoder, docs] = index::fit_and_encode(c.corpus);
  AuditIndex a{std::move(encoder), std::move(docs), {}, {}, 0, 0, 0, {}};
  a.raw_dim = a.encoder.dim();
  a.dim = std::min(o.dim, a.raw_dim);
  say(fmt::format("fitting the SVD projection {} -> {}", a.raw_dim, a.dim));
  index::SvdOptions so;
  so.seed = 1;
  PRIVSEARCH_ASSIGN_OR_RETURN(a.proj, index::fit_svd(a.docs, a.dim, so));
  a.x = a.proj.project_documents(a.docs);
  a.m = o.pq_m != 0 ? o.pq_m : index::default_pq_m(a.dim);
  say(fmt::format("training PQ (M = {})", a.m));
  index::PqOptions po;
  po.m = a.m;
  po.seed = 1;
  PRIVSEARCH_ASSIGN_OR_RETURN(a.pq, index::build_pq(a.x, po));
  return a;
}

// Squared error and relative L2 of `r` against `e`, accumulated into one space's figures.
struct FidelityAcc {
  std::vector<double> cos, rel;
  double sq = 0;
  std::size_t count = 0;
  void add(const std::vector<double>& r, const std::vector<double>& e) {
    cos.push_back(cosine(r, e));
    double err = 0, nn = 0;
    for (std::size_t j = 0; j < e.size(); ++j) {
      err += (r[j] - e[j]) * (r[j] - e[j]);
      nn += e[j] * e[j];
    }
    sq += err;
    count += e.size();
    rel.push_back(nn > 0 ? std::sqrt(err / nn) : 0);
  }
  ReconstructionFidelity result() const {
    return {describe(cos), describe(rel), std::sqrt(sq / static_cast<double>(count))};
  }
};

PqReconstruction reconstruction(const index::Collection& c, const AuditOptions& o,
                                const AuditIndex& a) {
  Prng prng = Prng::from_seed(Seed{static_cast<std::uint8_t>(o.seed & 0xff)}, o.seed);
  std::vector<std::size_t> sample(c.corpus.size());
  std::iota(sample.begin(), sample.end(), 0);
  const std::size_t ns = std::min(o.reconstruction_sample, sample.size());
  for (std::size_t i = 0; i < ns; ++i) {  // seeded partial Fisher-Yates
    std::swap(sample[i], sample[i + prng.uniform_below(sample.size() - i)]);
  }
  sample.resize(ns);
  std::sort(sample.begin(), sample.end());
  FidelityAcc projected, lifted;
  const auto& proj = a.proj;
  for (const std::size_t id : sample) {
    const auto rec = index::pq_decode(a.pq.codebook, a.pq.codes.data() + id * a.pq.codebook.m);
    const std::vector<double> r(rec.begin(), rec.end()), e(a.x.row(id), a.x.row(id) + a.dim);
    projected.add(r, e);
    // Lift: recon V^T + mu (basis layout input_dim x output_dim).
    std::vector<double> up(a.raw_dim);
    const std::vector<double> raw(a.docs.row(id), a.docs.row(id) + a.raw_dim);
    for (std::size_t i = 0; i < a.raw_dim; ++i) {
      double s = proj.mean[i];
      for (std::size_t j = 0; j < a.dim; ++j) s += proj.basis[i * proj.output_dim + j] * r[j];
      up[i] = s;
    }
    lifted.add(up, raw);
  }
  return {ns, projected.result(), lifted.result(), a.raw_dim * 4, a.dim * 4, a.m};
}

// Linkability of paired views: positives cos(A_i, B_i), negatives cos(A_i, B_{i+shift}) for up
// to ten seeded shifts.
std::pair<std::vector<double>, std::vector<double>> link_pairs(const std::vector<Vec>& va,
                                                               const std::vector<Vec>& vb,
                                                               Prng& lr) {
  std::vector<double> pos, neg;
  const std::size_t nq = va.size();
  for (std::size_t i = 0; i < nq; ++i) pos.push_back(cosine(va[i], vb[i]));
  const std::size_t shifts = std::min<std::size_t>(10, nq - 1);
  for (std::size_t s = 0; s < shifts; ++s) {
    const std::size_t shift = 1 + lr.uniform_below(nq - 1);
    for (std::size_t i = 0; i < nq; ++i) neg.push_back(cosine(va[i], vb[(i + shift) % nq]));
  }
  return {pos, neg};
}

// The audited queries: their true projected vectors and exhaustive top-100.
struct AuditQueries {
  std::vector<const index::Query*> queries;
  std::vector<Vec> z;
  std::vector<std::vector<std::size_t>> true_top;
};

class LeakageAudit {
 public:
  // Projects every audited query and ranks all documents for it once (its true top-100).
  LeakageAudit(const index::Collection& c, const AuditOptions& o, const AuditIndex& a,
               const index::PqScanner& scanner, std::vector<const index::Query*> queries)
      : c_(c), o_(o), a_(a), scanner_(scanner) {
    q_.queries = std::move(queries);
    for (const auto* query : q_.queries) {
      const auto zf = a.proj.project_query(a.encoder.encode_query(query->text));
      q_.z.push_back(unit(Vec(zf.begin(), zf.end())));
      q_.true_top.push_back(top_indices(exact_scores(q_.z.back()), 100));
      true_hit10_ += hit10(q_.true_top.back(), *query);
    }
  }

  // Hit@10 of the true projected queries' exhaustive rankings.
  double true_query_hit10() const { return true_hit10_ / static_cast<double>(q_.queries.size()); }

  std::vector<double> exact_scores(const Vec& q) const {
    std::vector<double> s(c_.corpus.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
      const float* row = a_.x.row(i);
      double t = 0;
      for (std::size_t j = 0; j < a_.dim; ++j) t += q[j] * row[j];
      s[i] = t;
    }
    return s;
  }

  double hit10(const std::vector<std::size_t>& top, const index::Query& q) const {
    const auto& judged = c_.qrels.at(q.id);
    for (std::size_t i = 0; i < std::min<std::size_t>(10, top.size()); ++i) {
      auto it = judged.find(c_.corpus[top[i]].id);
      if (it != judged.end() && it->second > 0) return 1.0;
    }
    return 0.0;
  }

  std::vector<double> rows_of(const std::vector<std::uint32_t>& ids) const {
    std::vector<double> rows(ids.size() * a_.dim);
    for (std::size_t r = 0; r < ids.size(); ++r) {
      std::copy(a_.x.row(ids[r]), a_.x.row(ids[r]) + a_.dim,
                rows.begin() + static_cast<std::ptrdiff_t>(r * a_.dim));
    }
    return rows;
  }

  Vec estimate(int estimator, const std::vector<double>& rows, std::size_t k) const {
    return estimator == 0   ? centroid_estimate(rows, k, a_.dim)
           : estimator == 1 ? log_rank_estimate(rows, k, a_.dim)
                            : ridge_rank_estimate(rows, k, a_.dim);
  }

  // Every estimator on the candidate lists of K (in PQ order and permuted).
  Result<std::map<std::string, EstimatorLeakage>> for_k(std::size_t k) const;
  // Set-only linkability with the client's permutation (centroid of random halves).
  Result<double> permuted_set_link_auc(std::size_t k) const;

 private:
  const index::Collection& c_;
  const AuditOptions& o_;
  const AuditIndex& a_;
  const index::PqScanner& scanner_;
  AuditQueries q_;
  double true_hit10_ = 0;
};

Result<std::map<std::string, EstimatorLeakage>> LeakageAudit::for_k(std::size_t k) const {
  struct Acc {
    std::vector<double> cos, top10, top100, hit;
    std::vector<Vec> view_a, view_b;  // disjoint alternating halves
  };
  std::map<std::string, Acc> acc;
  Prng shuffle = Prng::from_seed(Seed{static_cast<std::uint8_t>(k & 0xff)}, o_.seed + k);
  for (std::size_t qi = 0; qi < q_.queries.size(); ++qi) {
    std::vector<float> zq(q_.z[qi].begin(), q_.z[qi].end());
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto cand, scanner_.search(zq, k));
    std::vector<std::uint32_t> ordered(cand.begin(), cand.end());
    std::vector<std::uint32_t> permuted = ordered;
    for (std::size_t i = permuted.size(); i > 1; --i) {
      std::swap(permuted[i - 1], permuted[shuffle.uniform_below(i)]);
    }
    struct Variant {
      const char* name;
      const std::vector<std::uint32_t>* ids;
      int estimator;
    };
    const Variant variants[] = {{"centroid", &ordered, 0},
                                {"log_rank", &ordered, 1},
                                {"ridge", &ordered, 2},
                                {"log_rank_permuted", &permuted, 1},
                                {"ridge_permuted", &permuted, 2}};
    for (const auto& v : variants) {
      const Vec est = estimate(v.estimator, rows_of(*v.ids), v.ids->size());
      const auto top = top_indices(exact_scores(est), 100);
      auto& a = acc[v.name];
      a.cos.push_back(cosine(est, q_.z[qi]));
      a.top10.push_back(overlap(top, q_.true_top[qi], 10));
      a.top100.push_back(overlap(top, q_.true_top[qi], 100));
      a.hit.push_back(hit10(top, *q_.queries[qi]));
      std::vector<std::uint32_t> ha, hb;
      for (std::size_t r = 0; r < v.ids->size(); ++r) (r % 2 == 0 ? ha : hb).push_back((*v.ids)[r]);
      a.view_a.push_back(estimate(v.estimator, rows_of(ha), ha.size()));
      a.view_b.push_back(estimate(v.estimator, rows_of(hb), hb.size()));
    }
  }
  std::map<std::string, EstimatorLeakage> out;
  for (const auto& [name, a] : acc) {
    Prng lr = Prng::from_seed(Seed{0x11}, o_.seed + k);
    const auto [pos, neg] = link_pairs(a.view_a, a.view_b, lr);
    EstimatorLeakage e;
    e.cosine_mean = describe(a.cos).mean;
    e.top10_overlap = describe(a.top10).mean;
    e.top100_overlap = describe(a.top100).mean;
    e.hit10 = describe(a.hit).mean;
    e.link_auc = roc_auc(pos, neg);
    e.link_tpr_at_1pct_fpr = tpr_at_fpr(pos, neg, 0.01);
    e.link_positive_cosine = describe(pos);
    e.link_negative_cosine = describe(neg);
    out[name] = e;
  }
  return out;
}

Result<double> LeakageAudit::permuted_set_link_auc(std::size_t k) const {
  // The halves of a permuted list are random halves; the centroid is order-free, so measure it
  // on permuted halves directly.
  std::vector<Vec> va, vb;
  Prng shuffle = Prng::from_seed(Seed{0x22}, o_.seed);
  for (std::size_t qi = 0; qi < q_.queries.size(); ++qi) {
    std::vector<float> zq(q_.z[qi].begin(), q_.z[qi].end());
    PRIVSEARCH_ASSIGN_OR_RETURN(auto cand, scanner_.search(zq, k));
    for (std::size_t i = cand.size(); i > 1; --i)
      std::swap(cand[i - 1], cand[shuffle.uniform_below(i)]);
    std::vector<double> ra, rb;
    for (std::size_t r = 0; r < cand.size(); ++r) {
      auto& dst = r % 2 == 0 ? ra : rb;
      dst.insert(dst.end(), a_.x.row(cand[r]), a_.x.row(cand[r]) + a_.dim);
    }
    va.push_back(centroid_estimate(ra, ra.size() / a_.dim, a_.dim));
    vb.push_back(centroid_estimate(rb, rb.size() / a_.dim, a_.dim));
  }
  Prng lr = Prng::from_seed(Seed{0x33}, o_.seed);
  const auto [pos, neg] = link_pairs(va, vb, lr);
  return roc_auc(pos, neg);
}

Status check_audit_input(const index::Collection& c, const AuditOptions& o) {
  if (c.corpus.size() < 4 || c.queries.empty()) {
    return invalid_argument_error("the audit needs at least 4 documents and judged queries");
  }
  for (const std::size_t k : o.ks) {
    if (k < 4 || k > c.corpus.size()) {
      return invalid_argument_error("audit `K` = " + std::to_string(k) + " must be in [4, " +
                                    std::to_string(c.corpus.size()) + "]");
    }
  }
  return Status();
}

}  // namespace

Result<AuditResult> run_audit(const index::Collection& c, const AuditOptions& o,
                              const Progress& progress) {
  auto say = [&](const std::string& s) {
    if (progress) progress(s);
  };
  PRIVSEARCH_RETURN_IF_ERROR(check_audit_input(c, o));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto a, build_audit_index(c, o, say));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto scanner, index::PqScanner::create(a.pq));
  AuditResult out;
  out.encoder = a.encoder.id();
  out.dim = a.dim;
  out.pq_m = a.m;
  out.documents = c.corpus.size();
  out.seed = o.seed;
  say("public-PQ reconstruction");
  out.pq_reconstruction = reconstruction(c, o, a);

  std::vector<const index::Query*> queries;
  for (const auto& query : c.queries) {
    if (c.qrels.count(query.id) != 0) queries.push_back(&query);
  }
  if (o.max_queries != 0 && queries.size() > o.max_queries) queries.resize(o.max_queries);
  if (queries.size() < 3)
    return invalid_argument_error("the audit needs at least 3 judged queries");
  out.queries = queries.size();
  say(fmt::format("candidate-ID leakage over {} queries, K in {}", queries.size(),
                  fmt::join(o.ks, ", ")));
  const LeakageAudit leakage(c, o, a, scanner, std::move(queries));
  out.true_query_hit10 = leakage.true_query_hit10();
  bool have_set_auc = false;
  for (const std::size_t k : o.ks) {
    PRIVSEARCH_ASSIGN_OR_RETURN(out.candidate_leakage[k], leakage.for_k(k));
    if (k == 100 || (k == o.ks.back() && !have_set_auc)) {
      out.link_auc_set = out.candidate_leakage[k].at("centroid").link_auc;
      have_set_auc = true;
    }
  }
  const bool has100 = std::find(o.ks.begin(), o.ks.end(), 100) != o.ks.end();
  out.link_auc_set_permuted_k = has100 ? 100 : o.ks.back();
  PRIVSEARCH_ASSIGN_OR_RETURN(out.link_auc_set_permuted,
                              leakage.permuted_set_link_auc(out.link_auc_set_permuted_k));
  return out;
}

nlohmann::json AuditResult::to_json() const {
  auto fidelity = [](const ReconstructionFidelity& f) {
    return nlohmann::json{{"cosine", dist_json(f.cosine)},
                          {"relative_l2", dist_json(f.relative_l2)},
                          {"rmse", f.rmse}};
  };
  nlohmann::json out;
  out["suite"] = "audit";
  out["encoder"] = encoder;
  out["dim"] = dim;
  out["pq_m"] = pq_m;
  out["documents"] = documents;
  out["seed"] = seed;
  const auto& r = pq_reconstruction;
  out["pq_reconstruction"] = {{"sample", r.sample},
                              {"projected", fidelity(r.projected)},
                              {"lifted", fidelity(r.lifted)},
                              {"bytes_per_document",
                               {{"raw_float32", r.raw_float32_bytes},
                                {"projected_float32", r.projected_float32_bytes},
                                {"pq_code", r.pq_code_bytes}}}};
  out["pq_lifted_cosine_mean"] = r.lifted.cosine.mean;
  out["pq_projected_cosine_mean"] = r.projected.cosine.mean;
  out["queries"] = queries;
  out["true_query_hit10"] = true_query_hit10;
  nlohmann::json per_k = nlohmann::json::object();
  for (const auto& [k, estimators] : candidate_leakage) {
    nlohmann::json kj;
    for (const auto& [name, e] : estimators) {
      kj[name] = {{"cosine_mean", e.cosine_mean},
                  {"top10_overlap", e.top10_overlap},
                  {"top100_overlap", e.top100_overlap},
                  {"hit10", e.hit10},
                  {"link_auc", e.link_auc},
                  {"link_tpr_at_1pct_fpr", e.link_tpr_at_1pct_fpr},
                  {"link_positive_cosine", dist_json(e.link_positive_cosine)},
                  {"link_negative_cosine", dist_json(e.link_negative_cosine)}};
    }
    per_k["K=" + std::to_string(k)] = kj;
  }
  out["link_auc_set"] = link_auc_set;
  out["candidate_leakage"] = per_k;
  out["link_auc_set_permuted"] = link_auc_set_permuted;
  out["link_auc_set_permuted_k"] = link_auc_set_permuted_k;
  out["not_covered"] = {"score-oracle extraction (privsearch audit --extraction)",
                        "response re-randomization (noise flooding) option"};
  return out;
}

}  // namespace privsearch::eval
