// `privsearch bench e2e --json`: the private search end to end on a synthetic index, with the
// provider as a separate process over TLS on loopback (DESIGN.md section 9; issue 6 fields).
#pragma once

#include <cstddef>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace privsearch::tools {

struct E2eBenchOptions {
  std::size_t docs = 1000000;
  std::size_t input_dim = 768;
  std::size_t dim = 672;
  std::size_t pq_m = 96;
  std::size_t k = 100;
  std::size_t queries = 200;          // timed single-client searches (after 5 warm-up ones)
  std::size_t throughput_requests = 60;  // per concurrency level
  std::filesystem::path cache = "build/bench-e2e";  // synthetic indexes are built once here
  std::size_t fetch = 0;    // payloads fetched by ZipPIR after each timed fetch round (0: none)
  std::size_t fetches = 5;  // timed fetch rounds
};

Result<nlohmann::json> run_e2e_bench(const E2eBenchOptions& options);

}  // namespace privsearch::tools
