// `privsearch bench rerank`: the encrypted rerank kernels end to end on one thread.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace privsearch::tools {

struct RerankBenchOptions {
  std::vector<std::string> kernels;  // empty = default set
  std::vector<std::size_t> dims;     // empty = default set
  std::vector<std::size_t> ks;       // empty = default set
  std::size_t runs = 20;
  std::size_t warmup = 2;
  std::size_t order_queries = 200;   // queries for top10_order_match (fast kernel)
};

// {"suite": "rerank", "machine": {...}, "results": [ {kernel, dim, k, ...}, ... ]}
Result<nlohmann::json> run_rerank_bench(const RerankBenchOptions& options);

}  // namespace privsearch::tools
