// `privsearch bench ckks`: single-thread timings of the CKKS core for each named preset.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace privsearch::tools {

struct CkksBenchOptions {
  std::vector<std::string> presets;  // empty = all secure presets
  std::size_t runs = 50;
  std::size_t warmup = 5;
};

// One JSON object: {"suite": "ckks", "machine": {...}, "presets": {name: {fields}}}.
// Fails (kInternal) if a correctness check after timing fails.
Result<nlohmann::json> run_ckks_bench(const CkksBenchOptions& options);

}  // namespace privsearch::tools
