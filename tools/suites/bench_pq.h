// `privsearch bench pq`: the public index's offline build and the client's candidate scan.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "core/status.h"
#include "harness/measure.h"

namespace privsearch::tools {

struct PqBenchOptions {
  std::size_t codes = 1000000;    // documents scanned
  std::size_t dim = 672;          // d'
  std::size_t m = 96;             // subquantizers
  std::size_t train = 200000;     // PQ training vectors (0 = skip)
  std::size_t svd_rows = 200000;  // SVD fit rows of dimension svd_input (0 = skip)
  std::size_t svd_input = 768;
  std::size_t k = 100;
  std::size_t runs = 20;
};

struct PqBenchResult {
  nlohmann::json machine;
  PqBenchOptions options;
  std::optional<double> train_s;  // absent when training was skipped
  std::size_t train_vectors = 0, artifact_bytes = 0;
  TimingStats scan, scan_scalar, scan_faiss;  // microseconds per 1M-code scan
  bool scan_simd = false;
  double top_k_overlap_with_faiss = 0;
  std::optional<double> svd_fit_s, svd_retained_variance;
  nlohmann::json to_json() const;
};

Result<PqBenchResult> run_pq_bench(const PqBenchOptions& options);

}  // namespace privsearch::tools
