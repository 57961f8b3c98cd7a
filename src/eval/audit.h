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
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "index/beir.h"

namespace privsearch::eval {

struct AuditOptions {
  std::size_t dim = 672;
  std::size_t pq_m = 0;  // 0 = d'/8 rounded to a divisor
  std::vector<std::size_t> ks = {20, 50, 100, 200};
  std::size_t reconstruction_sample = 100000;
  std::size_t max_queries = 0;  // 0 = all judged queries
  std::uint64_t seed = 2026;
};

Result<nlohmann::json> run_audit(const index::Collection& collection, const AuditOptions& options,
                                 const std::function<void(const std::string&)>& progress);

}  // namespace privsearch::eval
