// AVX-512 LWE kernels (compiled with -mavx512f -mavx512bw, called after a CPUID check).
#include "pir/lwe/kernels.h"

#if defined(__AVX512F__) && defined(__AVX512BW__)
#include <immintrin.h>

#include <algorithm>

#include "pir/lwe/avx512_hsum.h"

namespace privsearch::pir::detail {

bool lwe_avx512_compiled() { return true; }

// Eight rows share each 16-entry slice of v: per 16 bytes of D one zero-extending load
// (vpmovzxbd), one vpmulld and one vpaddd. Eight rows halve the re-reads of v (from L2) against
// four and measured 52 ms against 58 ms per GiB here; the eight accumulators are named so they
// stay in registers.
void matvec_u8_u32_avx512(const std::uint8_t* d, std::size_t rows, std::size_t stride,
                          const std::uint32_t* v, std::uint32_t* out) {
  auto ld = [](const std::uint8_t* p) {
    return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  };
  const std::size_t vec = stride / 16 * 16;
  auto tail = [&](const std::uint8_t* row, std::uint32_t acc) {
    for (std::size_t c = vec; c < stride; ++c) acc += row[c] * v[c];
    return acc;
  };
  std::size_t r = 0;
  for (; r + 8 <= rows; r += 8) {
    const std::uint8_t* p0 = d + r * stride;
    const std::uint8_t* p1 = p0 + stride;
    const std::uint8_t* p2 = p1 + stride;
    const std::uint8_t* p3 = p2 + stride;
    const std::uint8_t* p4 = p3 + stride;
    const std::uint8_t* p5 = p4 + stride;
    const std::uint8_t* p6 = p5 + stride;
    const std::uint8_t* p7 = p6 + stride;
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0,
            a7 = a0;
    for (std::size_t c = 0; c < vec; c += 16) {
      const __m512i vv = _mm512_loadu_si512(v + c);
      a0 = _mm512_add_epi32(a0, _mm512_mullo_epi32(ld(p0 + c), vv));
      a1 = _mm512_add_epi32(a1, _mm512_mullo_epi32(ld(p1 + c), vv));
      a2 = _mm512_add_epi32(a2, _mm512_mullo_epi32(ld(p2 + c), vv));
      a3 = _mm512_add_epi32(a3, _mm512_mullo_epi32(ld(p3 + c), vv));
      a4 = _mm512_add_epi32(a4, _mm512_mullo_epi32(ld(p4 + c), vv));
      a5 = _mm512_add_epi32(a5, _mm512_mullo_epi32(ld(p5 + c), vv));
      a6 = _mm512_add_epi32(a6, _mm512_mullo_epi32(ld(p6 + c), vv));
      a7 = _mm512_add_epi32(a7, _mm512_mullo_epi32(ld(p7 + c), vv));
    }
    out[r] = tail(p0, hsum_u32(a0));
    out[r + 1] = tail(p1, hsum_u32(a1));
    out[r + 2] = tail(p2, hsum_u32(a2));
    out[r + 3] = tail(p3, hsum_u32(a3));
    out[r + 4] = tail(p4, hsum_u32(a4));
    out[r + 5] = tail(p5, hsum_u32(a5));
    out[r + 6] = tail(p6, hsum_u32(a6));
    out[r + 7] = tail(p7, hsum_u32(a7));
  }
  for (; r < rows; ++r) {
    const std::uint8_t* row = d + r * stride;
    __m512i a = _mm512_setzero_si512();
    for (std::size_t c = 0; c < vec; c += 16) {
      a = _mm512_add_epi32(a, _mm512_mullo_epi32(ld(row + c), _mm512_loadu_si512(v + c)));
    }
    out[r] = tail(row, hsum_u32(a));
  }
}

// H[r][:] += sum_c D[r][c] A[c][:], blocked: 128 rows of A (about 700 KB at n = 1400, in L2)
// against every row of H, 4 H rows x 64 columns in 16 registers.
void matmul_u8_u32_avx512(const std::uint8_t* d, std::size_t row_begin, std::size_t row_end,
                          std::size_t cols, std::size_t stride, const std::uint32_t* a,
                          std::size_t ld, std::uint32_t* h) {
  constexpr std::size_t kCBlock = 128;
  for (std::size_t c0 = 0; c0 < cols; c0 += kCBlock) {
    const std::size_t c1 = std::min(cols, c0 + kCBlock);
    std::size_t r = row_begin;
    for (; r + 4 <= row_end; r += 4) {
      const std::uint8_t* dr = d + r * stride;
      for (std::size_t j = 0; j < ld; j += 64) {
        const std::size_t width = std::min<std::size_t>(64, ld - j);  // multiple of 16
        const int vecs = static_cast<int>(width / 16);
        __m512i acc[4][4];
        for (int k = 0; k < 4; ++k) {
          for (int t = 0; t < vecs; ++t) {
            acc[k][t] = _mm512_loadu_si512(h + (r + static_cast<std::size_t>(k)) * ld + j +
                                           static_cast<std::size_t>(t) * 16);
          }
        }
        for (std::size_t c = c0; c < c1; ++c) {
          const std::uint32_t* ac = a + c * ld + j;
          const __m512i d0 = _mm512_set1_epi32(dr[c]);
          const __m512i d1 = _mm512_set1_epi32(dr[stride + c]);
          const __m512i d2 = _mm512_set1_epi32(dr[2 * stride + c]);
          const __m512i d3 = _mm512_set1_epi32(dr[3 * stride + c]);
          for (int t = 0; t < vecs; ++t) {
            const __m512i av = _mm512_loadu_si512(ac + t * 16);
            acc[0][t] = _mm512_add_epi32(acc[0][t], _mm512_mullo_epi32(d0, av));
            acc[1][t] = _mm512_add_epi32(acc[1][t], _mm512_mullo_epi32(d1, av));
            acc[2][t] = _mm512_add_epi32(acc[2][t], _mm512_mullo_epi32(d2, av));
            acc[3][t] = _mm512_add_epi32(acc[3][t], _mm512_mullo_epi32(d3, av));
          }
        }
        for (int k = 0; k < 4; ++k) {
          for (int t = 0; t < vecs; ++t) {
            _mm512_storeu_si512(
                h + (r + static_cast<std::size_t>(k)) * ld + j + static_cast<std::size_t>(t) * 16,
                acc[k][t]);
          }
        }
      }
    }
    for (; r < row_end; ++r) {
      std::uint32_t* hr = h + r * ld;
      for (std::size_t c = c0; c < c1; ++c) {
        const std::uint32_t dv = d[r * stride + c];
        const std::uint32_t* ac = a + c * ld;
        for (std::size_t j = 0; j < ld; ++j) hr[j] += dv * ac[j];
      }
    }
  }
}

}  // namespace privsearch::pir::detail

#else
// Built without AVX-512 (the WebAssembly client core): never dispatched to (kernels.cpp).
namespace privsearch::pir::detail {
bool lwe_avx512_compiled() { return false; }
void matvec_u8_u32_avx512(const std::uint8_t* d, std::size_t rows, std::size_t stride,
                          const std::uint32_t* v, std::uint32_t* out) {
  matvec_u8_u32_scalar(d, rows, stride, v, out);
}
void matmul_u8_u32_avx512(const std::uint8_t* d, std::size_t row_begin, std::size_t row_end,
                          std::size_t cols, std::size_t stride, const std::uint32_t* a,
                          std::size_t ld, std::uint32_t* h) {
  matmul_u8_u32_scalar(d + row_begin * stride, row_end - row_begin, cols, stride, a, ld, ld,
                       h + row_begin * ld);
}
}  // namespace privsearch::pir::detail
#endif
