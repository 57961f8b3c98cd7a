// `privsearch bench pir`: ZipPIR on a synthetic database (pseudorandom bytes) at the paper's
// parameters: LWE n = 1400, q = 2^32, binary secret, 3072-bit Paillier. One client; online
// answers on one thread, offline hint on all cores.
#pragma once

#include <cstddef>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace privsearch::tools {

struct PirBenchOptions {
  std::vector<std::size_t> db_mb = {1024};
  std::size_t record_bytes = 16384;
  std::size_t runs = 20;
  unsigned threads = 0;  // offline; 0 = all cores
  int paillier_bits = 3072;
  int hint_bits = 0;     // 0 = default
};

Result<nlohmann::json> run_pir_bench(const PirBenchOptions& options);

}  // namespace privsearch::tools
