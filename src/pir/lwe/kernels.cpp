#include "pir/lwe/kernels.h"

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

namespace privsearch::pir {

// CPUID only exists on x86-64; elsewhere (WebAssembly) the scalar paths run.
#if defined(__x86_64__)
bool lwe_kernels_use_avx512() {
  static const bool has = detail::lwe_avx512_compiled() && __builtin_cpu_supports("avx512f") &&
                          __builtin_cpu_supports("avx512bw");
  return has;
}

bool lwe_kernels_use_vnni() {
  static const bool has = lwe_kernels_use_avx512() && detail::lwe_vnni_compiled() &&
                          __builtin_cpu_supports("avx512vnni");
  return has;
}
#else
bool lwe_kernels_use_avx512() { return false; }
bool lwe_kernels_use_vnni() { return false; }
#endif

void matvec_u8_u32_avx512_only(const std::uint8_t* d, std::size_t rows, std::size_t stride,
                               const std::uint32_t* v, std::uint32_t* out) {
  if (lwe_kernels_use_avx512()) {
    detail::matvec_u8_u32_avx512(d, rows, stride, v, out);
  } else {
    matvec_u8_u32_scalar(d, rows, stride, v, out);
  }
}

void matvec_u8_u32_scalar(const std::uint8_t* d, std::size_t rows, std::size_t stride,
                          const std::uint32_t* v, std::uint32_t* out) {
  for (std::size_t r = 0; r < rows; ++r) {
    const std::uint8_t* row = d + r * stride;
    std::uint32_t acc = 0;
    for (std::size_t c = 0; c < stride; ++c) acc += static_cast<std::uint32_t>(row[c]) * v[c];
    out[r] = acc;
  }
}

void matvec_u8_u32(const std::uint8_t* d, std::size_t rows, std::size_t stride,
                   const std::uint32_t* v, std::uint32_t* out) {
  // The VNNI (vpdpbusd) and vpmaddwd kernels measured no faster than vpmulld on this
  // machine's memory-bound pass (59 ms per GiB each); they stay as tested alternatives.
  if (lwe_kernels_use_avx512()) {
    detail::matvec_u8_u32_avx512(d, rows, stride, v, out);
  } else {
    matvec_u8_u32_scalar(d, rows, stride, v, out);
  }
}

void matmul_u8_u32_scalar(const std::uint8_t* d, std::size_t rows, std::size_t cols,
                          std::size_t stride, const std::uint32_t* a, std::size_t n, std::size_t ld,
                          std::uint32_t* h) {
  for (std::size_t r = 0; r < rows; ++r) {
    std::uint32_t* hr = h + r * ld;
    std::fill(hr, hr + ld, 0u);
    for (std::size_t c = 0; c < cols; ++c) {
      const std::uint32_t dv = d[r * stride + c];
      const std::uint32_t* ac = a + c * ld;
      for (std::size_t j = 0; j < n; ++j) hr[j] += dv * ac[j];
    }
  }
}

void matmul_u8_u32(const std::uint8_t* d, std::size_t rows, std::size_t cols, std::size_t stride,
                   const std::uint32_t* a, std::size_t n, std::size_t ld, std::uint32_t* h,
                   unsigned threads) {
  if (!lwe_kernels_use_avx512()) {
    matmul_u8_u32_scalar(d, rows, cols, stride, a, n, ld, h);
    return;
  }
  std::memset(h, 0, rows * ld * sizeof(std::uint32_t));
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>((rows + 3) / 4)));
  // Row ranges in multiples of 4 (the kernel's register block).
  const std::size_t per = (rows / 4 + threads - 1) / threads * 4;
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    const std::size_t begin = std::min(rows, t * per);
    const std::size_t end = t + 1 == threads ? rows : std::min(rows, begin + per);
    if (begin >= end) continue;
    pool.emplace_back([=] { detail::matmul_u8_u32_avx512(d, begin, end, cols, stride, a, ld, h); });
  }
  for (auto& th : pool) th.join();
}

}  // namespace privsearch::pir
