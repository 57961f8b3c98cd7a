// PQ codes without training (no Faiss: the WebAssembly client compiles it): the seeded sample,
// an empty codebook of a shape, decoding and the reference exhaustive search.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "core/csprng.h"
#include "index/candidates/pq.h"

namespace privsearch::index {

std::vector<std::size_t> seeded_sample(std::size_t rows, std::size_t count, std::uint64_t seed,
                                       std::uint32_t stream) {
  count = std::min(count, rows);
  std::vector<std::size_t> order(rows);
  std::iota(order.begin(), order.end(), 0);
  Seed s{};
  for (int i = 0; i < 8; ++i)
    s[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(seed >> (8 * i));
  Prng prng = Prng::from_seed(s, stream);
  for (std::size_t i = 0; i < count; ++i) {
    std::swap(order[i], order[i + prng.uniform_below(rows - i)]);
  }
  order.resize(count);
  return order;
}

PqCodebook shaped_codebook(std::size_t dim, std::size_t m) {
  PqCodebook cb;
  cb.dim = dim;
  cb.m = m;
  cb.ksub = 256;
  cb.dsub = dim / m;
  cb.centroids.assign(m * cb.ksub * cb.dsub, 0.0f);
  return cb;
}

std::vector<float> pq_decode(const PqCodebook& cb, const std::uint8_t* code) {
  std::vector<float> v(cb.dim);
  for (std::size_t j = 0; j < cb.m; ++j) {
    const float* c = cb.centroids.data() + (j * cb.ksub + code[j]) * cb.dsub;
    std::copy_n(c, cb.dsub, v.data() + j * cb.dsub);
  }
  return v;
}

Result<std::vector<std::uint32_t>> pq_search(const PqArtifact& a, std::span<const float> q,
                                             std::size_t k) {
  const PqCodebook& cb = a.codebook;
  if (q.size() != cb.dim) {
    return invalid_argument_error(
        fmt::format("query has {} values; the PQ artifact has d' = {}", q.size(), cb.dim));
  }
  k = std::min(k, a.count);
  // lut[j][c] = <q_j, centroid_{j,c}>.
  std::vector<float> lut(cb.m * cb.ksub);
  for (std::size_t j = 0; j < cb.m; ++j) {
    for (std::size_t c = 0; c < cb.ksub; ++c) {
      const float* cen = cb.centroids.data() + (j * cb.ksub + c) * cb.dsub;
      float s = 0;
      for (std::size_t t = 0; t < cb.dsub; ++t) s += q[j * cb.dsub + t] * cen[t];
      lut[j * cb.ksub + c] = s;
    }
  }
  std::vector<float> scores(a.count);
  for (std::size_t i = 0; i < a.count; ++i) {
    const std::uint8_t* code = a.codes.data() + i * cb.m;
    float s = 0;
    for (std::size_t j = 0; j < cb.m; ++j) s += lut[j * cb.ksub + code[j]];
    scores[i] = s;
  }
  std::vector<std::uint32_t> idx(a.count);
  std::iota(idx.begin(), idx.end(), 0u);
  auto better = [&](std::uint32_t x, std::uint32_t y) {
    return scores[x] > scores[y] || (scores[x] == scores[y] && x < y);
  };
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(), better);
  idx.resize(k);
  return idx;
}

std::size_t default_pq_m(std::size_t dim, std::size_t divisor) {
  std::size_t m = std::max<std::size_t>(1, dim / std::max<std::size_t>(1, divisor));
  while (m > 1 && dim % m != 0) --m;
  return m;
}

}  // namespace privsearch::index
