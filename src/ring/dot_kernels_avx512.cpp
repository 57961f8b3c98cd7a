// AVX-512F/DQ version of shoup_dot2 (see dot_kernels.h). The lazy Shoup product uses the
// approximate high product of ntt_avx512.cpp: qhat may be up to 2 low, so x*w - qhat*m lies in
// [0, 4m) and one conditional subtraction of 2m brings it to [0, 2m).
// Compiled with -mavx512f -mavx512dq; called only after CPUID says so.
#include "ring/dot_kernels.h"

#if defined(__AVX512F__) && defined(__AVX512DQ__)
#include <immintrin.h>

namespace privsearch::ring::detail {

namespace {
using V = __m512i;
inline V sub_if_ge(V x, V b) { return _mm512_min_epu64(x, _mm512_sub_epi64(x, b)); }
inline V lazy_shoup(V x, V w, V ws, V q, V two_q) {
  const V x_hi = _mm512_srli_epi64(x, 32);
  const V ws_hi = _mm512_srli_epi64(ws, 32);
  const V p11 = _mm512_mul_epu32(x_hi, ws_hi);
  const V p01 = _mm512_mul_epu32(x, ws_hi);
  const V p10 = _mm512_mul_epu32(x_hi, ws);
  const V qhat = _mm512_add_epi64(
      p11, _mm512_add_epi64(_mm512_srli_epi64(p01, 32), _mm512_srli_epi64(p10, 32)));
  const V r = _mm512_sub_epi64(_mm512_mullo_epi64(x, w), _mm512_mullo_epi64(qhat, q));
  return sub_if_ge(r, two_q);
}
}  // namespace

bool dot_avx512_compiled() { return true; }

void shoup_dot2_avx512(const ShoupDotOperands& ops, const std::uint32_t* perm, std::size_t n,
                       const Modulus& m, std::uint64_t* out0, std::uint64_t* out1) {
  const V q = _mm512_set1_epi64(static_cast<long long>(m.value()));
  const V two_q = _mm512_add_epi64(q, q);
  for (std::size_t t = 0; t < n; t += 8) {
    __m256i idx32 = _mm256_setzero_si256();
    if (perm != nullptr) idx32 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(perm + t));
    V acc0 = _mm512_setzero_si512(), acc1 = _mm512_setzero_si512();
    for (std::size_t j = 0; j < ops.terms; ++j) {
      const V x = perm != nullptr
                      ? _mm512_i32gather_epi64(idx32, reinterpret_cast<const long long*>(ops.x[j]), 8)
                      : _mm512_loadu_si512(ops.x[j] + t);
      acc0 = sub_if_ge(_mm512_add_epi64(acc0, lazy_shoup(x, _mm512_loadu_si512(ops.b[j] + t),
                                                         _mm512_loadu_si512(ops.b_shoup[j] + t),
                                                         q, two_q)),
                       two_q);
      acc1 = sub_if_ge(_mm512_add_epi64(acc1, lazy_shoup(x, _mm512_loadu_si512(ops.a[j] + t),
                                                         _mm512_loadu_si512(ops.a_shoup[j] + t),
                                                         q, two_q)),
                       two_q);
    }
    _mm512_storeu_si512(out0 + t, sub_if_ge(acc0, q));
    _mm512_storeu_si512(out1 + t, sub_if_ge(acc1, q));
  }
}

}  // namespace privsearch::ring::detail

#else

namespace privsearch::ring::detail {
bool dot_avx512_compiled() { return false; }
void shoup_dot2_avx512(const ShoupDotOperands& ops, const std::uint32_t* perm, std::size_t n,
                       const Modulus& m, std::uint64_t* out0, std::uint64_t* out1) {
  shoup_dot2_scalar(ops, perm, n, m, out0, out1);
}
}  // namespace privsearch::ring::detail

#endif
