// AVX-512 kernels mod 2^64 (compiled with -mavx512f/bw/dq/vnni, called after a CPUID check).
#include "pir/lwe/kernels64.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && \
    defined(__AVX512VNNI__)
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <vector>

#include "pir/lwe/avx512_hsum.h"

namespace privsearch::pir::detail {
namespace {

// vpdpbusd adds four products of at most 255 * 128 to a lane: 2^31 / (4 * 255 * 128) = 16,448
// instructions (1M columns) before an int32 lane could overflow; lanes are flushed to int64
// after every chunk of kChunkColumns, far below that.
// The product is a small GEMM (rows x cols) x (cols x 8m digit planes). Column chunks of 8,192
// keep the planes of every query (8 x 8 KiB each) in L2 while each pair of rows streams from
// memory once; per 64 columns a pair of rows and one query's 8 planes feed 16 accumulators.
constexpr std::size_t kChunkColumns = 8192;
constexpr std::size_t kMaxDigits = 8;

// Exact int64 sum of 16 signed int32 lanes.
inline std::int64_t hsum_i32_exact(__m512i v) {
  const __m512i lo = _mm512_cvtepi32_epi64(_mm512_castsi512_si256(v));
  const __m512i hi = _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(v, 1));
  return _mm512_reduce_add_epi64(_mm512_add_epi64(lo, hi));
}

// Rows r0, r1 (r1 may repeat r0 for an odd tail) x the D digit planes at `planes` over
// [c0, c1); adds the digit sums to s0[0..D) and s1[0..D). D is a template parameter so the
// accumulator arrays unroll into registers.
template <std::size_t D>
inline void pair_chunk(const std::uint8_t* r0, const std::uint8_t* r1, const std::int8_t* planes,
                       std::size_t stride, std::size_t c0, std::size_t c1, std::int64_t* s0,
                       std::int64_t* s1) {
  __m512i a[D], b[D];
#pragma GCC unroll 8
  for (std::size_t k = 0; k < D; ++k) a[k] = b[k] = _mm512_setzero_si512();
  for (std::size_t c = c0; c < c1; c += 64) {
    const __m512i x = _mm512_loadu_si512(r0 + c);
    const __m512i y = _mm512_loadu_si512(r1 + c);
    const std::int8_t* p = planes + c;
#pragma GCC unroll 8
    for (std::size_t k = 0; k < D; ++k) {
      const __m512i t = _mm512_loadu_si512(p + k * stride);
      a[k] = _mm512_dpbusd_epi32(a[k], x, t);
      b[k] = _mm512_dpbusd_epi32(b[k], y, t);
    }
  }
#pragma GCC unroll 8
  for (std::size_t k = 0; k < D; ++k) {
    s0[k] += hsum_i32_exact(a[k]);
    s1[k] += hsum_i32_exact(b[k]);
  }
}

}  // namespace

bool lwe64_avx512_compiled() { return true; }

void matvec_u8_u64_batch_vnni(const std::uint8_t* d, std::size_t rows, std::size_t stride,
                              const std::uint64_t* v, std::size_t m, std::uint64_t* out,
                              std::size_t digits) {
  // Balanced signed byte digits of every query: plane (i, k) at (i * digits + k) * stride.
  std::vector<std::int8_t> planes(m * digits * stride);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t c = 0; c < stride; ++c) {
      std::uint64_t x = v[i * stride + c];
      for (std::size_t k = 0; k < digits; ++k) {
        const auto t = static_cast<std::int8_t>(x & 0xff);
        planes[(i * digits + k) * stride + c] = t;
        x = (x - static_cast<std::uint64_t>(static_cast<std::int64_t>(t))) >> 8;
      }
    }
  }
  // sums[(r * m + i) * digits + k] = D_r . digit plane (i, k), exact.
  std::vector<std::int64_t> sums(rows * m * digits, 0);
  std::int64_t scratch[kMaxDigits];
  for (std::size_t c0 = 0; c0 < stride; c0 += kChunkColumns) {
    const std::size_t c1 = std::min(stride, c0 + kChunkColumns);
    for (std::size_t r = 0; r < rows; r += 2) {
      const bool pair = r + 1 < rows;
      const std::uint8_t* r0 = d + r * stride;
      const std::uint8_t* r1 = pair ? r0 + stride : r0;
      for (std::size_t i = 0; i < m; ++i) {
        std::int64_t* s0 = sums.data() + (r * m + i) * digits;
        std::int64_t* s1 = pair ? sums.data() + ((r + 1) * m + i) * digits : scratch;
        const std::int8_t* p = planes.data() + i * digits * stride;
        if (digits == 8) {
          pair_chunk<8>(r0, r1, p, stride, c0, c1, s0, s1);
        } else {
          pair_chunk<6>(r0, r1, p, stride, c0, c1, s0, s1);
        }
      }
    }
  }
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t i = 0; i < m; ++i) {
      std::uint64_t acc = 0;
      for (std::size_t k = 0; k < digits; ++k) {
        acc += static_cast<std::uint64_t>(sums[(r * m + i) * digits + k]) << (8 * k);
      }
      out[i * rows + r] = acc;
    }
  }
}

void matmul_u8_u64_avx512(const std::uint8_t* d, std::size_t row_begin, std::size_t row_end,
                          std::size_t cols, std::size_t stride, const std::uint64_t* a,
                          std::size_t ld, std::uint64_t* h) {
  // Stripes of 32 output columns (4 zmm) x 4 rows of accumulators; the columns of D in chunks
  // whose stripe of A (kc x 256 bytes) stays in L2 while every row block passes over it.
  constexpr std::size_t kc = 2048;
  for (std::size_t jb = 0; jb < ld; jb += 32) {
    for (std::size_t c0 = 0; c0 < cols; c0 += kc) {
      const std::size_t c1 = std::min(cols, c0 + kc);
      std::size_t r = row_begin;
      for (; r + 4 <= row_end; r += 4) {
        __m512i acc[4][4];
        for (std::size_t t = 0; t < 4; ++t)
          for (std::size_t k = 0; k < 4; ++k)
            acc[t][k] = _mm512_loadu_si512(h + (r + t) * ld + jb + 8 * k);
        const std::uint8_t* d0 = d + r * stride;
        for (std::size_t c = c0; c < c1; ++c) {
          const std::uint64_t* ac = a + c * ld + jb;
          const __m512i a0 = _mm512_loadu_si512(ac), a1 = _mm512_loadu_si512(ac + 8),
                        a2 = _mm512_loadu_si512(ac + 16), a3 = _mm512_loadu_si512(ac + 24);
#pragma GCC unroll 4
          for (std::size_t t = 0; t < 4; ++t) {
            const __m512i x = _mm512_set1_epi64(d0[t * stride + c]);
            acc[t][0] = _mm512_add_epi64(acc[t][0], _mm512_mullo_epi64(x, a0));
            acc[t][1] = _mm512_add_epi64(acc[t][1], _mm512_mullo_epi64(x, a1));
            acc[t][2] = _mm512_add_epi64(acc[t][2], _mm512_mullo_epi64(x, a2));
            acc[t][3] = _mm512_add_epi64(acc[t][3], _mm512_mullo_epi64(x, a3));
          }
        }
        for (std::size_t t = 0; t < 4; ++t)
          for (std::size_t k = 0; k < 4; ++k)
            _mm512_storeu_si512(h + (r + t) * ld + jb + 8 * k, acc[t][k]);
      }
      for (; r < row_end; ++r) {
        __m512i acc[4];
        for (std::size_t k = 0; k < 4; ++k) acc[k] = _mm512_loadu_si512(h + r * ld + jb + 8 * k);
        for (std::size_t c = c0; c < c1; ++c) {
          const __m512i x = _mm512_set1_epi64(d[r * stride + c]);
          const std::uint64_t* ac = a + c * ld + jb;
          for (std::size_t k = 0; k < 4; ++k) {
            acc[k] =
                _mm512_add_epi64(acc[k], _mm512_mullo_epi64(x, _mm512_loadu_si512(ac + 8 * k)));
          }
        }
        for (std::size_t k = 0; k < 4; ++k) _mm512_storeu_si512(h + r * ld + jb + 8 * k, acc[k]);
      }
    }
  }
}

void dot_u32_batch_avx512(const std::uint32_t* h, std::size_t rows, std::size_t n,
                          const std::uint32_t* s, std::size_t m, std::uint32_t* out) {
  // Groups of up to 8 vectors: one pass over a row of h feeds 8 accumulators.
  for (std::size_t i0 = 0; i0 < m; i0 += 8) {
    const std::size_t g = std::min<std::size_t>(8, m - i0);
    for (std::size_t r = 0; r < rows; ++r) {
      const std::uint32_t* hr = h + r * n;
      __m512i acc[8];
      for (std::size_t i = 0; i < 8; ++i) acc[i] = _mm512_setzero_si512();
      std::size_t j = 0;
      for (; j + 16 <= n; j += 16) {
        const __m512i x = _mm512_loadu_si512(hr + j);
        for (std::size_t i = 0; i < g; ++i) {
          acc[i] = _mm512_add_epi32(
              acc[i], _mm512_mullo_epi32(x, _mm512_loadu_si512(s + (i0 + i) * n + j)));
        }
      }
      for (std::size_t i = 0; i < g; ++i) {
        std::uint32_t v = hsum_u32(acc[i]);
        for (std::size_t t = j; t < n; ++t) v += hr[t] * s[(i0 + i) * n + t];
        out[(i0 + i) * rows + r] = v;
      }
    }
  }
}

}  // namespace privsearch::pir::detail

#else
// Built without AVX-512 (the WebAssembly client core): lwe64_avx512_compiled() is false, so
// kernels64.cpp never dispatches here.
#include "core/check.h"

namespace privsearch::pir::detail {
bool lwe64_avx512_compiled() { return false; }
void matvec_u8_u64_batch_vnni(const std::uint8_t*, std::size_t, std::size_t, const std::uint64_t*,
                              std::size_t, std::uint64_t*, std::size_t) {
  PRIVSEARCH_CHECK(false, "the AVX-512 LWE kernels are not compiled in");
}
void matmul_u8_u64_avx512(const std::uint8_t*, std::size_t, std::size_t, std::size_t, std::size_t,
                          const std::uint64_t*, std::size_t, std::uint64_t*) {
  PRIVSEARCH_CHECK(false, "the AVX-512 LWE kernels are not compiled in");
}
void dot_u32_batch_avx512(const std::uint32_t*, std::size_t, std::size_t, const std::uint32_t*,
                          std::size_t, std::uint32_t*) {
  PRIVSEARCH_CHECK(false, "the AVX-512 LWE kernels are not compiled in");
}
}  // namespace privsearch::pir::detail
#endif
