// The encrypted rung of `privsearch eval --encrypted`: the collection indexed on disk, a real
// provider process over TLS on loopback, every judged query through the private search, and
// the same K candidates reranked in plaintext from the exact store. Reports the paper's
// decision (section 4.1): the paired bootstrap interval of nDCG@10(CKKS) - nDCG@10(plaintext
// rerank) against a margin of +-0.002: "equivalent" when the interval lies inside the margin,
// "non-inferior" when only its lower end clears -margin, "inferior" when it lies below, else
// "inconclusive" (an interval containing zero is never evidence by itself). Also the numerical
// audit (absolute error of every decrypted candidate score against the exact plaintext score),
// the exact top-10 order match, latency, and optional per-query JSONL records.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/status.h"
#include "eval/statistics.h"
#include "index/encoders/beir.h"

namespace privsearch::tools {

struct EncryptedEvalOptions {
  std::size_t k = 100;
  std::size_t dim = 672;
  std::size_t resamples = 10000;
  std::uint64_t seed = 1;
  double margin = 0.002;
  std::filesystem::path work_dir = "build/eval-encrypted";
  std::filesystem::path per_query_jsonl;  // empty: none
  std::string preset;                     // the provider's --preset (empty: its default)
};

struct EncryptedEvalResult {
  std::size_t queries = 0, k = 0;
  std::string artifact_version;
  std::string preset, kernel;  // what the provider served (ServerInfo)
  double ndcg10_ckks = 0, ndcg10_plaintext_rerank = 0;
  // Paired bootstrap of nDCG@10(CKKS) - nDCG@10(plaintext rerank).
  double diff_mean = 0, diff_low = 0, diff_high = 0;
  std::size_t resamples = 0;
  double margin = 0;
  std::string decision;
  double top10_order_match = 0;
  double max_abs_error = 0, mean_abs_error = 0, rmse = 0;
  std::size_t scores_compared = 0;
  std::optional<eval::Distribution> end_to_end_ms;
  // The JSON of `eval --encrypted`'s `encrypted_rerank` (field names are an interface).
  nlohmann::json to_json() const;
};

Result<EncryptedEvalResult> run_encrypted_eval(
    const index::Collection& collection, const std::filesystem::path& dataset_dir,
    const EncryptedEvalOptions& options, const std::function<void(const std::string&)>& progress);

}  // namespace privsearch::tools
