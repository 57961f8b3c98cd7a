// Request material for the audits and benchmarks that drive a provider with raw requests.
#pragma once

#include <cstddef>
#include <vector>

#include "core/csprng.h"

namespace privsearch::tools {

// A uniformly random direction of `dim` coordinates, unit norm.
std::vector<double> random_unit_vector(std::size_t dim, Prng& prng);

}  // namespace privsearch::tools
