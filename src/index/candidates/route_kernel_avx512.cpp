// half_matvec's AVX-512F kernel (index/candidates/route_kernel.h); compiled with -mavx512f, called
// only when the CPU has it.
#include <immintrin.h>

#include "index/candidates/route_kernel.h"

namespace privsearch::index::detail {

void half_matvec_avx512(const std::uint16_t* table, std::size_t rows, std::size_t cols,
                        const float* q, float* scores) {
  const std::size_t wide = cols / 16 * 16;
  for (std::size_t l = 0; l < rows; ++l) {
    const std::uint16_t* row = table + l * cols;
    // Two accumulators: the FMA chain of one row is cols / 16 long.
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
    std::size_t j = 0;
    for (; j + 32 <= wide; j += 32) {
      const __m512 c0 =
          _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + j)));
      const __m512 c1 =
          _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + j + 16)));
      a0 = _mm512_fmadd_ps(c0, _mm512_loadu_ps(q + j), a0);
      a1 = _mm512_fmadd_ps(c1, _mm512_loadu_ps(q + j + 16), a1);
    }
    for (; j < wide; j += 16) {
      const __m512 c0 =
          _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + j)));
      a0 = _mm512_fmadd_ps(c0, _mm512_loadu_ps(q + j), a0);
    }
    if (j < cols) {  // the last cols % 16, zero-padded
      alignas(32) std::uint16_t tail_c[16] = {};
      alignas(64) float tail_q[16] = {};
      for (std::size_t t = 0; j + t < cols; ++t) {
        tail_c[t] = row[j + t];
        tail_q[t] = q[j + t];
      }
      const __m512 c0 =
          _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(tail_c)));
      a1 = _mm512_fmadd_ps(c0, _mm512_load_ps(tail_q), a1);
    }
    scores[l] = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
  }
}

}  // namespace privsearch::index::detail
