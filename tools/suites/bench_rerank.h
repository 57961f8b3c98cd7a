// `privsearch bench rerank`: the encrypted rerank kernels end to end (one thread unless a case
// names its fast-kernel threads), as the
// provider serves them (query deserialized, plaintexts encoded, kernel evaluated, response
// serialized), with the client's decryption, the precision and the exact top-10 order checked
// after timing.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "eval/statistics.h"
#include "rerank/kernels.h"

namespace privsearch::tools {

struct RerankBenchOptions {
  std::vector<std::string> kernels;  // empty = default set
  std::vector<std::size_t> dims;     // empty = default set
  std::vector<std::size_t> ks;       // empty = default set
  std::vector<std::size_t> threads;  // fast kernel threads; empty = 1 (and 2 in the default set)
  std::size_t runs = 20;
  std::size_t warmup = 2;
  std::size_t order_queries = 200;  // queries for top10_order_match (fast kernel)
};

// One (kernel, d', K) case.
struct RerankCaseResult {
  std::string kernel, preset;
  std::size_t dim = 0, k = 0, threads = 1;
  eval::Distribution server_ms;     // per request, provider side
  double encode_ms = 0, he_ms = 0;  // medians inside the kernel
  rerank::OpCounts counts;
  std::size_t response_ciphertexts = 0, response_bytes = 0, request_bytes = 0;
  std::size_t request_message_bytes = 0, response_message_bytes = 0;
  std::size_t galois_keys = 0, galois_key_bytes = 0;
  double client_decrypt_ms = 0, client_encrypt_ms = 0;
  double max_abs_error = 0;
  double top10_order_match = 0;
  std::size_t top10_queries = 0;
  struct Layout {
    std::size_t period, width, windows, blocks, baby, giant;
  };
  std::optional<Layout> layout;  // the fast kernel's window layout
  nlohmann::json to_json() const;
};

struct RerankBenchResult {
  nlohmann::json machine;
  std::vector<RerankCaseResult> results;
  // {"suite": "rerank", "machine": {...}, "results": [ {kernel, dim, k, ...}, ... ]}
  nlohmann::json to_json() const;
};

Result<RerankBenchResult> run_rerank_bench(const RerankBenchOptions& options);

}  // namespace privsearch::tools
