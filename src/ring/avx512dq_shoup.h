// Lazy Shoup product on eight 64-bit lanes with AVX-512F/DQ, shared by the AVX-512DQ NTT, key
// inner-product and row kernels. Include only from translation units compiled with
// -mavx512f -mavx512dq (and called only after CPUID says so).
//
// Approximate high product: with w' = floor(w * 2^64 / q), the exact floor(x*w'/2^64) is
// p11 + (p01 >> 32) + (p10 >> 32) + c for the 32-bit partial products p_ij = x_i * w'_j and a
// carry c in {0, 1, 2}; dropping c under-estimates qhat by at most 2, so r = x*w - qhat*q (low
// 64 bits, vpmullq) lies in [0, 4q) < 2^64, and one conditional subtraction of 2q returns it to
// [0, 2q). Three vpmuludq instead of four, no carry chain.
#pragma once

#include <immintrin.h>

namespace privsearch::ring::detail {

// x < 4q (any x < 2^64 with q < 2^62), w < q, ws = floor(w * 2^64 / q): x*w mod q in [0, 2q).
inline __m512i lazy_shoup_dq(__m512i x, __m512i w, __m512i ws, __m512i q, __m512i two_q) {
  const __m512i x_hi = _mm512_srli_epi64(x, 32);
  const __m512i ws_hi = _mm512_srli_epi64(ws, 32);
  const __m512i p11 = _mm512_mul_epu32(x_hi, ws_hi);
  const __m512i p01 = _mm512_mul_epu32(x, ws_hi);
  const __m512i p10 = _mm512_mul_epu32(x_hi, ws);
  const __m512i qhat = _mm512_add_epi64(
      p11, _mm512_add_epi64(_mm512_srli_epi64(p01, 32), _mm512_srli_epi64(p10, 32)));
  const __m512i r = _mm512_sub_epi64(_mm512_mullo_epi64(x, w), _mm512_mullo_epi64(qhat, q));
  return _mm512_min_epu64(r, _mm512_sub_epi64(r, two_q));
}

}  // namespace privsearch::ring::detail
