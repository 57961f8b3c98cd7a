// Quality of access-private search next to candidate mode, offline, on a built index and its
// BEIR collection. For every judged query:
//   candidate  the top-K PQ candidates reranked by their exact projected scores (what the CKKS
//              rerank returns, in plaintext; `eval --encrypted` shows the two agree);
//   private    the exact integer scores of every document in the m clusters the client picks
//              (scoring/client/private_query.h), computed in the clear from the scoring matrix:
//              the encrypted path decodes exactly these integers (scoring_test), so quality
//              needs no cryptography; `encrypted_queries` of them also go through the real
//              LWE path in-process and must agree score for score.
// Also: how often a judged relevant document lies in the chosen clusters (cluster recall).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "core/status.h"
#include "scoring/build.h"

namespace privsearch::tools {

struct PrivateEvalOptions {
  std::size_t k = 100;  // PQ candidates (candidate mode; also the cluster choice)
  std::size_t m = scoring::kDefaultClusters;  // clusters scored per query
  std::size_t encrypted_queries = SIZE_MAX;   // of them also through the real LWE path
  scoring::ScoringBuildOptions scoring;       // used when the index has no scoring artifacts
};

struct PrivateEvalResult {
  std::size_t queries = 0, m = 0, k = 0;
  std::uint32_t clusters = 0, cluster_rows = 0, dim = 0, doc_bits = 0, query_bits = 0;
  std::uint32_t score_bits = 0, answer_bits = 0;
  double ndcg10_candidate = 0, ndcg10_private = 0;
  double recall100_candidate = 0;
  double cluster_recall = 0;  // judged relevant documents inside the chosen clusters
  std::size_t encrypted_checked = 0, encrypted_mismatches = 0;
  nlohmann::json to_json() const;
};

// The index `eval --access-private` (and `bench private`) read by default: built once under
// build/eval-private/<collection>-d<dim>-p<score bits>-v<format> with the built-in `encoder` at d'
// = `dim` and the scoring database, then reused.
Result<std::filesystem::path> ensure_private_eval_index(
    const std::filesystem::path& dataset_dir, const std::string& encoder, std::size_t dim,
    scoring::ScoringBuildOptions scoring, const std::function<void(const std::string&)>& progress);

Result<PrivateEvalResult> run_private_eval(const std::filesystem::path& index_dir,
                                           const std::filesystem::path& dataset_dir,
                                           const PrivateEvalOptions& options,
                                           const std::function<void(const std::string&)>& progress);

}  // namespace privsearch::tools
