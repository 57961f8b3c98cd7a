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
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace privsearch::tools {

struct SystemsBenchOptions {
  std::filesystem::path index = "build/demo/index-scifact";
  std::size_t k = 100;
  std::size_t pool = 32;                     // pre-encrypted requests
  std::size_t requests_per_level = 240;      // total per concurrency level
  std::vector<std::size_t> clients = {1, 2, 4, 8, 16};
};

Result<nlohmann::json> run_systems_bench(const SystemsBenchOptions& options);

}  // namespace privsearch::tools
