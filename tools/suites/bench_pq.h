// `privsearch bench pq`: the public index's offline build and the client's candidate scan.
#pragma once

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace privsearch::tools {

struct PqBenchOptions {
  std::size_t codes = 1000000;      // documents scanned
  std::size_t dim = 672;            // d'
  std::size_t m = 96;               // subquantizers
  std::size_t train = 200000;       // PQ training vectors (0 = skip)
  std::size_t svd_rows = 200000;    // SVD fit rows of dimension svd_input (0 = skip)
  std::size_t svd_input = 768;
  std::size_t k = 100;
  std::size_t runs = 20;
};

Result<nlohmann::json> run_pq_bench(const PqBenchOptions& options);

}  // namespace privsearch::tools
