#include "pir/lwe/kernels64.h"

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "core/check.h"

namespace privsearch::pir {

// CPUID only exists on x86-64; elsewhere (WebAssembly) the scalar paths run.
#if defined(__x86_64__)
bool lwe64_kernels_use_avx512() {
  static const bool has = detail::lwe64_avx512_compiled() && __builtin_cpu_supports("avx512f") &&
                          __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
  return has;
}

bool lwe64_kernels_use_vnni() {
  static const bool has = lwe64_kernels_use_avx512() && __builtin_cpu_supports("avx512vnni");
  return has;
}
#else
bool lwe64_kernels_use_avx512() { return false; }
bool lwe64_kernels_use_vnni() { return false; }
#endif

void matvec_u8_u64_batch_scalar(const std::uint8_t* d, std::size_t rows, std::size_t stride,
                                const std::uint64_t* v, std::size_t m, std::uint64_t* out) {
  for (std::size_t i = 0; i < m; ++i) {
    const std::uint64_t* vi = v + i * stride;
    for (std::size_t r = 0; r < rows; ++r) {
      const std::uint8_t* row = d + r * stride;
      std::uint64_t acc = 0;
      for (std::size_t c = 0; c < stride; ++c) acc += static_cast<std::uint64_t>(row[c]) * vi[c];
      out[i * rows + r] = acc;
    }
  }
}

void matvec_u8_u64_batch(const std::uint8_t* d, std::size_t rows, std::size_t stride,
                         const std::uint64_t* v, std::size_t m, std::uint64_t* out,
                         std::size_t digits) {
  PRIVSEARCH_CHECK(digits == 6 || digits == 8, "matvec_u8_u64_batch: 6 or 8 digits");
  if (lwe64_kernels_use_vnni()) {
    detail::matvec_u8_u64_batch_vnni(d, rows, stride, v, m, out, digits);
  } else {
    // Exact mod 2^64 on values below 2^(8 digits): the low 8 digits bytes are the same.
    matvec_u8_u64_batch_scalar(d, rows, stride, v, m, out);
  }
}

void matmul_u8_u64_scalar(const std::uint8_t* d, std::size_t rows, std::size_t cols,
                          std::size_t stride, const std::uint64_t* a, std::size_t ld,
                          std::uint64_t* h) {
  for (std::size_t r = 0; r < rows; ++r) {
    std::uint64_t* hr = h + r * ld;
    for (std::size_t c = 0; c < cols; ++c) {
      const std::uint64_t dv = d[r * stride + c];
      const std::uint64_t* ac = a + c * ld;
      for (std::size_t j = 0; j < ld; ++j) hr[j] += dv * ac[j];
    }
  }
}

void matmul_u8_u64(const std::uint8_t* d, std::size_t rows, std::size_t cols, std::size_t stride,
                   const std::uint64_t* a, std::size_t ld, std::uint64_t* h, unsigned threads) {
  if (!lwe64_kernels_use_avx512()) {
    matmul_u8_u64_scalar(d, rows, cols, stride, a, ld, h);
    return;
  }
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>((rows + 3) / 4)));
  const std::size_t per = (rows / 4 + threads - 1) / threads * 4;  // whole 4-row blocks
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    const std::size_t begin = std::min(rows, t * per);
    const std::size_t end = t + 1 == threads ? rows : std::min(rows, begin + per);
    if (begin >= end) continue;
    pool.emplace_back([=] { detail::matmul_u8_u64_avx512(d, begin, end, cols, stride, a, ld, h); });
  }
  for (auto& th : pool) th.join();
}

void dot_u32_batch_scalar(const std::uint32_t* h, std::size_t rows, std::size_t n,
                          const std::uint32_t* s, std::size_t m, std::uint32_t* out) {
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t r = 0; r < rows; ++r) {
      std::uint32_t acc = 0;
      for (std::size_t j = 0; j < n; ++j) acc += h[r * n + j] * s[i * n + j];
      out[i * rows + r] = acc;
    }
  }
}

void dot_u32_batch(const std::uint32_t* h, std::size_t rows, std::size_t n, const std::uint32_t* s,
                   std::size_t m, std::uint32_t* out) {
  if (lwe64_kernels_use_avx512()) {
    detail::dot_u32_batch_avx512(h, rows, n, s, m, out);
  } else {
    dot_u32_batch_scalar(h, rows, n, s, m, out);
  }
}

}  // namespace privsearch::pir
