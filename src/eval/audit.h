// `privsearch audit`: the search paper's leakage audits (section 4.4; reference notes 4.1-4.2) on
// any BEIR collection, with the built-in encoder, SVD projection and PQ of `privsearch build`.
//
//  - Public-PQ reconstruction: for a seeded sample of documents, decode the public PQ code and
//    compare with the exact projected row (cosine, relative L2, RMSE), then lift back to the
//    encoder space (recon V^T + mu) and compare with the encoder's vector.
//  - Candidate-ID leakage: per judged query and K, what the provider can infer from the K IDs
//    and its own exact rows (centroid, log-rank, ridge; leakage.h): cosine to the true projected
//    query, overlap of their exhaustive top-10/top-100 with the true query's, Hit@10 of judged
//    documents; the same with the candidate order permuted (the client's default); linkability
//    of two disjoint halves of one candidate list (ROC AUC, TPR at 1% FPR).
// The score-oracle extraction and the circuit-privacy checks need a provider process and are
// not part of this run.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/status.h"
#include "eval/statistics.h"
#include "index/encoders/beir.h"

namespace privsearch::eval {

struct AuditOptions {
  std::size_t dim = 672;
  std::size_t pq_m = 0;  // 0 = d'/8 rounded to a divisor
  std::vector<std::size_t> ks = {20, 50, 100, 200};
  std::size_t reconstruction_sample = 100000;
  std::size_t max_queries = 0;  // 0 = all judged queries
  std::uint64_t seed = 2026;
};

// How close decoded public PQ codes come to the exact rows, in one space.
struct ReconstructionFidelity {
  Distribution cosine, relative_l2;
  double rmse = 0;
};

struct PqReconstruction {
  std::size_t sample = 0;
  ReconstructionFidelity projected, lifted;  // projected rows; lifted back to the encoder space
  std::size_t raw_float32_bytes = 0, projected_float32_bytes = 0, pq_code_bytes = 0;
};

// What one estimator recovers from the candidate IDs of one K, over all audited queries.
struct EstimatorLeakage {
  double cosine_mean = 0;  // to the true projected query
  double top10_overlap = 0, top100_overlap = 0, hit10 = 0;
  double link_auc = 0, link_tpr_at_1pct_fpr = 0;  // two halves of one candidate list
  Distribution link_positive_cosine, link_negative_cosine;
};

struct AuditResult {
  std::string encoder;
  std::size_t dim = 0, pq_m = 0, documents = 0, queries = 0;
  std::uint64_t seed = 0;
  PqReconstruction pq_reconstruction;
  double true_query_hit10 = 0;
  // K -> estimator name (centroid, log_rank, ridge, log_rank_permuted, ridge_permuted) -> figures
  std::map<std::size_t, std::map<std::string, EstimatorLeakage>> candidate_leakage;
  double link_auc_set = 0;           // centroid linkability at K = 100 (or the largest K)
  double link_auc_set_permuted = 0;  // the same on the client's permuted order
  std::size_t link_auc_set_permuted_k = 0;

  // The JSON of `privsearch audit` (field names are an interface: scripts read them).
  nlohmann::json to_json() const;
};

Result<AuditResult> run_audit(const index::Collection& collection, const AuditOptions& options,
                              const std::function<void(const std::string&)>& progress);

}  // namespace privsearch::eval
