#include "harness/random_vectors.h"

#include <cmath>

namespace privsearch::tools {

std::vector<double> random_unit_vector(std::size_t dim, Prng& prng) {
  std::vector<double> z(dim);
  double norm = 0;
  for (auto& v : z) {
    v = static_cast<double>(prng.next_u64() >> 11) * 0x1p-53 - 0.5;
    norm += v * v;
  }
  for (auto& v : z) v /= std::sqrt(norm);
  return z;
}

}  // namespace privsearch::tools
