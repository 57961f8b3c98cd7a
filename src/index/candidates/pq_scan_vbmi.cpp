// AVX-512 VBMI kernel of the fast PQ scan (see pq_scan.h). Compiled with -mavx512f
// -mavx512bw -mavx512vbmi; called only after CPUID says so.
#include "index/candidates/pq_scan.h"

#if defined(__AVX512VBMI__) && defined(__AVX512BW__)
#include <immintrin.h>

namespace privsearch::index::detail {

bool vbmi_available() {
  return __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw");
}

void scan_blocks_vbmi(const std::uint8_t* blocked, std::size_t blocks, std::size_t m,
                      const std::uint8_t* tables, std::uint16_t* out) {
  for (std::size_t blk = 0; blk < blocks; ++blk) {
    __m512i acc_lo = _mm512_setzero_si512(), acc_hi = _mm512_setzero_si512();
    const std::uint8_t* codes = blocked + blk * m * 64;
    for (std::size_t j = 0; j < m; ++j) {
      const std::uint8_t* t = tables + j * 256;
      const __m512i t0 = _mm512_loadu_si512(t), t1 = _mm512_loadu_si512(t + 64);
      const __m512i t2 = _mm512_loadu_si512(t + 128), t3 = _mm512_loadu_si512(t + 192);
      const __m512i c = _mm512_loadu_si512(codes + j * 64);
      // Entries 0..127 from (t0, t1), 128..255 from (t2, t3), chosen by the code's bit 7.
      const __m512i lo = _mm512_permutex2var_epi8(t0, c, t1);
      const __m512i hi = _mm512_permutex2var_epi8(t2, c, t3);
      const __mmask64 top = _mm512_movepi8_mask(c);
      const __m512i v = _mm512_mask_blend_epi8(top, lo, hi);
      acc_lo = _mm512_add_epi16(acc_lo, _mm512_cvtepu8_epi16(_mm512_castsi512_si256(v)));
      acc_hi = _mm512_add_epi16(acc_hi, _mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(v, 1)));
    }
    _mm512_storeu_si512(out + blk * 64, acc_lo);
    _mm512_storeu_si512(out + blk * 64 + 32, acc_hi);
  }
}

}  // namespace privsearch::index::detail

#else

#include "core/check.h"

namespace privsearch::index::detail {
bool vbmi_available() { return false; }
void scan_blocks_vbmi(const std::uint8_t*, std::size_t, std::size_t, const std::uint8_t*,
                      std::uint16_t*) {
  PRIVSEARCH_CHECK(false, "VBMI scan not compiled");
}
}  // namespace privsearch::index::detail

#endif
