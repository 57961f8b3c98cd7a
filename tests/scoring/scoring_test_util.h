// Shared by the scoring tests: clustered synthetic rows and small insecure build options.
#pragma once

#include <cstdint>

#include "core/csprng.h"
#include "index/vectors_io.h"
#include "scoring/build.h"

namespace privsearch::scoring::test_util {

// n points around `centers` Gaussian-ish centers (sum of uniforms), `cols` dimensions.
inline index::Matrix clustered(std::size_t n, std::size_t cols, std::size_t centers,
                               std::uint8_t seed) {
  Prng prng = Prng::from_seed(Seed{seed});
  auto uniform = [&] { return static_cast<float>(prng.next_u64() >> 11) * 0x1p-53f - 0.5f; };
  std::vector<float> c(centers * cols);
  for (auto& v : c) v = 4 * uniform();
  index::Matrix m;
  m.rows = n;
  m.cols = cols;
  m.data.resize(n * cols);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t k = prng.uniform_below(centers);
    for (std::size_t j = 0; j < cols; ++j) {
      m.data[i * cols + j] = c[k * cols + j] + uniform() + uniform() + uniform();
    }
  }
  return m;
}

inline ScoringBuildOptions test_options() {
  ScoringBuildOptions o;
  o.dim = 16;
  o.cluster_dim = 8;
  o.cluster_rows = 64;
  o.query_bits = 8;
  o.lwe_params = "insecure-test-n64-ternary";
  o.allow_insecure = true;
  return o;
}
}  // namespace privsearch::scoring::test_util
