// `privsearch audit --access-private`: what the provider observes in access-private mode and
// what it can do with it, next to candidate mode on the same queries.
//
// Every judged query is sent twice (two independent encryptions, as a user repeating a search)
// to an in-process ProviderCore holding the scoring matrix: once in a first pass over the
// queries, once in a second pass in shuffled order (back-to-back requests would share the
// machine's momentary speed and be linked by time whatever they carry). The provider's view of a
// request is its request and response bytes, its own processing time and the ciphertext bytes.
// Linkability (eval/leakage.h's protocol): positives pair the two requests of one query, negatives
// pair requests of different queries (ten seeded shifts); similarity from the bytes (-|size
// difference|), the time (-|time difference|) and the ciphertexts (cosine of their first 4,096
// entries as uniform reals); ROC AUC of each. Sizes must be identical for every request (the
// audit fails otherwise). Neighbourhood: the best the provider can do without a query-dependent
// signal is a fixed guess (the 10 documents most often in the queries' true top-10, a prior
// generous to it); its top-10 overlap is reported next to candidate mode's (the centroid of the
// candidates' exact rows ranking every document).
// Candidate mode on the same queries: linkability of the two halves of the K PQ candidates
// (centroid estimator, the search paper's set-only audit) and its neighbourhood overlap.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "core/status.h"
#include "eval/statistics.h"
#include "scoring/layout.h"

namespace privsearch::tools {

struct PrivateAuditOptions {
  std::size_t m = scoring::kDefaultClusters;
  std::size_t k = 100;
  std::size_t max_queries = 0;  // 0: all judged queries
  std::uint64_t seed = 2026;
};

struct PrivateAuditResult {
  std::size_t queries = 0, m = 0, k = 0;
  std::uint64_t request_bytes = 0, response_bytes = 0;
  bool sizes_constant = false;
  double link_auc_bytes = 0, link_auc_timing = 0, link_auc_ciphertext = 0;
  double link_auc = 0;  // the estimator furthest from 0.5
  double link_auc_candidate = 0;
  double top10_overlap_private = 0, top10_overlap_candidate = 0;
  eval::Distribution provider_ms;
  nlohmann::json to_json() const;
};

Result<PrivateAuditResult> run_private_audit(
    const std::filesystem::path& index_dir, const std::filesystem::path& dataset_dir,
    const PrivateAuditOptions& options, const std::function<void(const std::string&)>& progress);

}  // namespace privsearch::tools
