// Request material for the audits and benchmarks that drive a provider with raw requests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/csprng.h"

namespace privsearch::tools {

// A uniformly random direction of `dim` coordinates, unit norm.
std::vector<double> random_unit_vector(std::size_t dim, Prng& prng);

// `k` distinct document rows drawn uniformly from [0, n) (k <= n), in draw order.
std::vector<std::uint64_t> random_distinct_ids(std::uint64_t n, std::size_t k, Prng& prng);

}  // namespace privsearch::tools
