#include "harness/random_vectors.h"

#include <cmath>
#include <unordered_set>

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

std::vector<std::uint64_t> random_distinct_ids(std::uint64_t n, std::size_t k, Prng& prng) {
  std::vector<std::uint64_t> ids;
  std::unordered_set<std::uint64_t> seen;
  while (ids.size() < k && seen.size() < n) {
    const std::uint64_t id = prng.uniform_below(n);
    if (seen.insert(id).second) ids.push_back(id);
  }
  return ids;
}

}  // namespace privsearch::tools
