// `privsearch bench compress`: LWE-ciphertext compression with Paillier (ZipPIR section 5.1-5.2):
// single compression per parameter set, packed compression keys, and the batched curve.
#pragma once

#include <cstddef>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace privsearch::tools {

struct CompressBenchOptions {
  int paillier_bits = 3072;
  std::vector<std::size_t> batch_counts = {1, 2, 5, 10, 20, 50, 71, 100, 150, 200};
  std::size_t runs = 3;
  unsigned threads = 0;  // key encryption; 0 = all cores
};

Result<nlohmann::json> run_compress_bench(const CompressBenchOptions& options);

}  // namespace privsearch::tools
