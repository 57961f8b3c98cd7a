#include "index/pq_scan.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

namespace privsearch::index {

Result<PqScanner> PqScanner::create(const PqArtifact& a) {
  const std::size_t m = a.codebook.m;
  if (m == 0 || m > 257 || a.codebook.ksub != 256 || a.codes.size() != a.count * m) {
    return invalid_argument_error("PQ artifact shape unsupported by the fast scan");
  }
  PqScanner s(a);
  s.simd_ = detail::vbmi_available();
  const std::size_t blocks = (a.count + 63) / 64;
  s.blocked_.assign(blocks * m * 64, 0);
  for (std::size_t i = 0; i < a.count; ++i) {
    const std::uint8_t* code = a.codes.data() + i * m;
    std::uint8_t* dst = s.blocked_.data() + (i / 64) * m * 64 + (i % 64);
    for (std::size_t j = 0; j < m; ++j) dst[j * 64] = code[j];
  }
  return s;
}

Result<std::vector<std::uint32_t>> PqScanner::search(std::span<const float> q,
                                                     std::size_t k) const {
  const PqArtifact& a = *artifact_;
  if (!simd_) return pq_search(a, q, k);
  const PqCodebook& cb = a.codebook;
  if (q.size() != cb.dim) {
    return invalid_argument_error(
        fmt::format("query has {} values; the PQ artifact has d' = {}", q.size(), cb.dim));
  }
  k = std::min(k, a.count);
  if (k == 0) return std::vector<std::uint32_t>{};
  const std::size_t m = cb.m;
  // Float tables and their byte quantization with one step for all tables.
  std::vector<float> lut(m * 256);
  std::vector<float> mins(m);
  float max_range = 0;
  for (std::size_t j = 0; j < m; ++j) {
    float lo = INFINITY, hi = -INFINITY;
    for (std::size_t c = 0; c < 256; ++c) {
      const float* cen = cb.centroids.data() + (j * 256 + c) * cb.dsub;
      float s = 0;
      for (std::size_t t = 0; t < cb.dsub; ++t) s += q[j * cb.dsub + t] * cen[t];
      lut[j * 256 + c] = s;
      lo = std::min(lo, s);
      hi = std::max(hi, s);
    }
    mins[j] = lo;
    max_range = std::max(max_range, hi - lo);
  }
  const float delta = max_range > 0 ? max_range / 255.0f : 1.0f;
  std::vector<std::uint8_t> t8(m * 256);
  for (std::size_t j = 0; j < m; ++j) {
    for (std::size_t c = 0; c < 256; ++c) {
      const float v = std::nearbyint((lut[j * 256 + c] - mins[j]) / delta);
      t8[j * 256 + c] = static_cast<std::uint8_t>(std::clamp(v, 0.0f, 255.0f));
    }
  }
  const std::size_t blocks = (a.count + 63) / 64;
  std::vector<std::uint16_t> approx(blocks * 64);
  detail::scan_blocks_vbmi(blocked_.data(), blocks, m, t8.data(), approx.data());
  // K-th largest approximate score among real documents, then the candidate pool within the
  // error bound: |approx*delta + sum(mins) - exact| <= m * delta / 2 (+ float rounding).
  // The K-th largest 16-bit score from a histogram (one pass, no sort of a million values).
  std::vector<std::uint32_t> histogram(65536, 0);
  for (std::size_t i = 0; i < a.count; ++i) ++histogram[approx[i]];
  std::size_t seen = 0;
  std::size_t kth_value = 65535;
  for (std::size_t v = 65536; v-- > 0;) {
    seen += histogram[v];
    if (seen >= k) {
      kth_value = v;
      break;
    }
  }
  const double kth = static_cast<double>(kth_value);
  const double slack = static_cast<double>(m) + 2.0;  // m * delta (two half-errors) in units of delta
  std::vector<std::uint32_t> pool;
  for (std::size_t i = 0; i < a.count; ++i) {
    if (static_cast<double>(approx[i]) >= kth - slack) pool.push_back(static_cast<std::uint32_t>(i));
  }
  std::vector<float> exact(pool.size());
  for (std::size_t p = 0; p < pool.size(); ++p) {
    const std::uint8_t* code = a.codes.data() + static_cast<std::size_t>(pool[p]) * m;
    float s = 0;
    for (std::size_t j = 0; j < m; ++j) s += lut[j * 256 + code[j]];
    exact[p] = s;
  }
  std::vector<std::size_t> order(pool.size());
  std::iota(order.begin(), order.end(), 0);
  const std::size_t kk = std::min(k, pool.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(kk), order.end(),
                    [&](std::size_t x, std::size_t y) {
                      return exact[x] > exact[y] || (exact[x] == exact[y] && pool[x] < pool[y]);
                    });
  std::vector<std::uint32_t> out(kk);
  for (std::size_t i = 0; i < kk; ++i) out[i] = pool[order[i]];
  return out;
}

}  // namespace privsearch::index
