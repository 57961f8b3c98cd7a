// AVX-512 LWE kernels (compiled with -mavx512f -mavx512bw, called after a CPUID check).
#include <immintrin.h>

#include <algorithm>

#include "pir/lwe/kernels.h"

namespace privsearch::pir::detail {

bool lwe_avx512_compiled() { return true; }

// Four rows share each 16-entry slice of v: per 16 bytes of D one zero-extending load
// (vpmovzxbd), one vpmulld and one vpaddd.
void matvec_u8_u32_avx512(const std::uint8_t* d, std::size_t rows, std::size_t stride,
                          const std::uint32_t* v, std::uint32_t* out) {
  std::size_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const std::uint8_t* r0 = d + r * stride;
    const std::uint8_t* r1 = r0 + stride;
    const std::uint8_t* r2 = r1 + stride;
    const std::uint8_t* r3 = r2 + stride;
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    __m512i b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    std::size_t c = 0;
    for (; c + 32 <= stride; c += 32) {
      const __m512i v0 = _mm512_loadu_si512(v + c);
      const __m512i v1 = _mm512_loadu_si512(v + c + 16);
      auto ld = [](const std::uint8_t* p) {
        return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
      };
      a0 = _mm512_add_epi32(a0, _mm512_mullo_epi32(ld(r0 + c), v0));
      a1 = _mm512_add_epi32(a1, _mm512_mullo_epi32(ld(r1 + c), v0));
      a2 = _mm512_add_epi32(a2, _mm512_mullo_epi32(ld(r2 + c), v0));
      a3 = _mm512_add_epi32(a3, _mm512_mullo_epi32(ld(r3 + c), v0));
      b0 = _mm512_add_epi32(b0, _mm512_mullo_epi32(ld(r0 + c + 16), v1));
      b1 = _mm512_add_epi32(b1, _mm512_mullo_epi32(ld(r1 + c + 16), v1));
      b2 = _mm512_add_epi32(b2, _mm512_mullo_epi32(ld(r2 + c + 16), v1));
      b3 = _mm512_add_epi32(b3, _mm512_mullo_epi32(ld(r3 + c + 16), v1));
    }
    std::uint32_t t0 = static_cast<std::uint32_t>(_mm512_reduce_add_epi32(_mm512_add_epi32(a0, b0)));
    std::uint32_t t1 = static_cast<std::uint32_t>(_mm512_reduce_add_epi32(_mm512_add_epi32(a1, b1)));
    std::uint32_t t2 = static_cast<std::uint32_t>(_mm512_reduce_add_epi32(_mm512_add_epi32(a2, b2)));
    std::uint32_t t3 = static_cast<std::uint32_t>(_mm512_reduce_add_epi32(_mm512_add_epi32(a3, b3)));
    for (; c < stride; ++c) {
      t0 += r0[c] * v[c];
      t1 += r1[c] * v[c];
      t2 += r2[c] * v[c];
      t3 += r3[c] * v[c];
    }
    out[r] = t0;
    out[r + 1] = t1;
    out[r + 2] = t2;
    out[r + 3] = t3;
  }
  for (; r < rows; ++r) {
    const std::uint8_t* row = d + r * stride;
    std::uint32_t acc = 0;
    for (std::size_t c = 0; c < stride; ++c) acc += row[c] * v[c];
    out[r] = acc;
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
            _mm512_storeu_si512(h + (r + static_cast<std::size_t>(k)) * ld + j +
                                    static_cast<std::size_t>(t) * 16,
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
