// AVX-512 IFMA version of shoup_dot2 for rows modulo m < 2^50 (see dot_kernels.h), with 52-bit
// Shoup companions w' = floor(w * 2^52 / m): for x < 2^52, qhat = madd52hi(x, w') is at most one
// below floor(x*w/m), so x*w - qhat*m lies in [0, 2m) and is exact in the low 52 bits.
// Compiled with -mavx512f -mavx512ifma; called only after CPUID says so.
#include "ring/dot_kernels.h"

#if defined(__AVX512F__) && defined(__AVX512IFMA__)
#include <immintrin.h>

namespace privsearch::ring::detail {

namespace {
using V = __m512i;
inline V sub_if_ge(V x, V b) { return _mm512_min_epu64(x, _mm512_sub_epi64(x, b)); }
inline V lazy_shoup52(V x, V w, V ws, V q, V mask52) {
  const V zero = _mm512_setzero_si512();
  const V qhat = _mm512_madd52hi_epu64(zero, x, ws);
  const V xw = _mm512_madd52lo_epu64(zero, x, w);
  const V qq = _mm512_madd52lo_epu64(zero, qhat, q);
  return _mm512_and_si512(_mm512_sub_epi64(xw, qq), mask52);
}
}  // namespace

bool dot_ifma_compiled() { return true; }

void shoup_dot2_ifma(const ShoupDotOperands& ops, const std::uint32_t* perm, std::size_t n,
                     const Modulus& m, std::uint64_t* out0, std::uint64_t* out1) {
  const V q = _mm512_set1_epi64(static_cast<long long>(m.value()));
  const V two_q = _mm512_add_epi64(q, q);
  const V mask52 = _mm512_set1_epi64((1LL << 52) - 1);
  for (std::size_t t = 0; t < n; t += 8) {
    __m256i idx32 = _mm256_setzero_si256();
    if (perm != nullptr) idx32 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(perm + t));
    V acc0 = _mm512_setzero_si512(), acc1 = _mm512_setzero_si512();
    for (std::size_t j = 0; j < ops.terms; ++j) {
      const V x = perm != nullptr
                      ? _mm512_i32gather_epi64(idx32, reinterpret_cast<const long long*>(ops.x[j]), 8)
                      : _mm512_loadu_si512(ops.x[j] + t);
      acc0 = sub_if_ge(_mm512_add_epi64(acc0, lazy_shoup52(x, _mm512_loadu_si512(ops.b[j] + t),
                                                           _mm512_loadu_si512(ops.b_shoup[j] + t),
                                                           q, mask52)),
                       two_q);
      acc1 = sub_if_ge(_mm512_add_epi64(acc1, lazy_shoup52(x, _mm512_loadu_si512(ops.a[j] + t),
                                                           _mm512_loadu_si512(ops.a_shoup[j] + t),
                                                           q, mask52)),
                       two_q);
    }
    _mm512_storeu_si512(out0 + t, sub_if_ge(acc0, q));
    _mm512_storeu_si512(out1 + t, sub_if_ge(acc1, q));
  }
}

}  // namespace privsearch::ring::detail

#else

#include "core/check.h"

namespace privsearch::ring::detail {
bool dot_ifma_compiled() { return false; }
void shoup_dot2_ifma(const ShoupDotOperands&, const std::uint32_t*, std::size_t, const Modulus&,
                     std::uint64_t*, std::uint64_t*) {
  PRIVSEARCH_CHECK(false, "IFMA dot kernel not compiled");
}
}  // namespace privsearch::ring::detail

#endif
