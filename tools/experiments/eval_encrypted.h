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
#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "index/beir.h"

namespace privsearch::tools {

struct EncryptedEvalOptions {
  std::size_t k = 100;
  std::size_t dim = 672;
  std::size_t resamples = 10000;
  std::uint64_t seed = 1;
  double margin = 0.002;
  std::filesystem::path work_dir = "build/eval-encrypted";
  std::filesystem::path per_query_jsonl;  // empty: none
};

Result<nlohmann::json> run_encrypted_eval(const index::Collection& collection,
                                          const std::filesystem::path& dataset_dir,
                                          const EncryptedEvalOptions& options,
                                          const std::function<void(const std::string&)>& progress);


}  // namespace privsearch::tools
