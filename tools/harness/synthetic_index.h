// Synthetic embeddings with structure for the scale benchmarks and the self-retrieval track:
// x = normalize(L u + noise e), u a 32-d latent vector, L a fixed 32 x input_dim mixing matrix;
// all from one seeded stream, so document i is the same vector in every run. Indexes built from
// them are cached under a directory (built once; ~7 min at 1M documents).
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "core/csprng.h"
#include "core/status.h"

namespace privsearch::tools {

class Synthetic {
 public:
  explicit Synthetic(std::size_t input_dim) : dim_(input_dim), mix_(kLatent * input_dim) {
    Prng p = Prng::from_seed(seed(), 0);
    for (auto& m : mix_) m = uniform(p);
  }
  std::vector<float> vector(std::uint64_t id, double noise = 0.3) const {
    Prng p = Prng::from_seed(seed(), id + 1);
    float u[kLatent];
    for (auto& x : u) x = uniform(p);
    std::vector<float> v(dim_);
    for (std::size_t j = 0; j < dim_; ++j) {
      float s = 0;
      for (std::size_t r = 0; r < kLatent; ++r) s += u[r] * mix_[r * dim_ + j];
      v[j] = s + static_cast<float>(noise) * uniform(p);
    }
    float n = 0;
    for (const float x : v) n += x * x;
    for (auto& x : v) x /= std::sqrt(n);
    return v;
  }

 private:
  static constexpr std::size_t kLatent = 32;
  static Seed seed() {
    Seed s{};
    s[0] = 0xe2;
    return s;
  }
  static float uniform(Prng& p) {
    return static_cast<float>(static_cast<double>(p.next_u64() >> 11) * 0x1p-52 - 1.0);
  }
  std::size_t dim_;
  std::vector<float> mix_;
};

// The index of `docs` synthetic documents under `cache` (built on first use). `private_dim` > 0:
// with the access-private scoring database on that many coordinates; `ivf`: with the IVF lists
// (index/candidates/ivf.h, default list count); each variant its own cache entry.
Result<std::filesystem::path> ensure_synthetic_index(
    const std::filesystem::path& cache, std::size_t docs, std::size_t input_dim, std::size_t dim,
    std::size_t pq_m, const Synthetic& gen, std::uint32_t private_dim = 0, bool ivf = false);

}  // namespace privsearch::tools
