// `privsearch bench systems --json`: the search paper's systems figures (section 4.3) against a
// real provider process over TLS on loopback:
//   saturation   closed loop at 1, 2, 4, 8, 16 clients, each sending requests back to back from
//                a pool of pre-encrypted requests (no client crypto on the clock): requests/s,
//                p50/p95/p99 latency, provider CPU (cores busy) and peak memory, failures
//   epochs       cold (first request: key upload + request) vs warm, and bytes per request
//                amortized over 1, 10 and 100 requests of one key epoch
//   baselines    what returning the K candidate vectors instead would cost: projected and raw
//                float32, float16, int8 with a per-row scale (bytes; gather + serialize time)
// Run on an index built by `privsearch build` (default: the demo's SciFact index).
#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"

namespace privsearch::tools {

struct SystemsBenchOptions {
  std::filesystem::path index = "build/demo/index-scifact";
  std::size_t k = 100;
  std::size_t pool = 32;                 // pre-encrypted requests
  std::size_t requests_per_level = 240;  // total per concurrency level
  std::vector<std::size_t> clients = {1, 2, 4, 8, 16};
};

// Cold vs warm requests of one key epoch, and what they cost in bytes.
struct EpochFigures {
  double cold_keygen_and_upload_ms = 0, cold_first_request_ms = 0;
  std::vector<double> warm_request_ms;
  std::size_t key_upload_bytes = 0, request_bytes = 0, response_bytes = 0;
};

// One closed-loop concurrency level.
struct SaturationLevel {
  std::size_t clients = 0, requests = 0, failures = 0;
  double requests_per_s = 0, provider_cpu_cores_busy = 0;
  std::vector<double> latency_ms;
};

// The K candidate rows returned in the clear instead, encoded one way.
struct VectorReturn {
  std::size_t bytes = 0;
  double ms = 0;  // median time to gather and encode them
};

struct SystemsBenchResult {
  nlohmann::json machine;
  std::string index;
  std::size_t docs = 0, dim = 0, k = 0, input_dim = 0;
  EpochFigures epochs;
  std::vector<SaturationLevel> saturation;
  std::size_t provider_peak_rss_bytes = 0;
  nlohmann::json kernel_scaling;  // rows of bench rerank (dim, k, server_ms, response_bytes)
  VectorReturn float32, float16, int8_row_scale;
  nlohmann::json to_json() const;
};

Result<SystemsBenchResult> run_systems_bench(const SystemsBenchOptions& options);

}  // namespace privsearch::tools
