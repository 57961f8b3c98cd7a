// AVX-512 IFMA version of shoup_dot2 for rows modulo m < 2^50 (see dot_kernels.h), with keys in
// Montgomery form w' = w * 2^52 mod m. REDC with R = 2^52: T = x * w' (x < 2^52), lo/hi its
// 52-bit halves, u = lo * (-m^-1) mod 2^52, and (T + u*m) / 2^52 = hi + hi52(u*m) + [lo != 0]
// (the low halves sum to 0 or 2^52), a value in [0, 2m) equal to x * w mod m.
// Compiled with -mavx512f -mavx512ifma; called only after CPUID says so.
#include "ring/dot_kernels.h"

#if defined(__AVX512F__) && defined(__AVX512IFMA__)
#include <immintrin.h>

namespace privsearch::ring::detail {

namespace {
using V = __m512i;
inline V sub_if_ge(V x, V b) { return _mm512_min_epu64(x, _mm512_sub_epi64(x, b)); }
inline V montgomery52(V x, V w_mont, V q, V q_neg_inv) {
  const V zero = _mm512_setzero_si512();
  const V lo = _mm512_madd52lo_epu64(zero, x, w_mont);
  const V hi = _mm512_madd52hi_epu64(zero, x, w_mont);
  const V u = _mm512_madd52lo_epu64(zero, lo, q_neg_inv);
  const V t = _mm512_madd52hi_epu64(hi, u, q);
  const __mmask8 carry = _mm512_test_epi64_mask(lo, lo);
  return _mm512_mask_add_epi64(t, carry, t, _mm512_set1_epi64(1));
}
}  // namespace

bool dot_ifma_compiled() { return true; }

void shoup_dot2_ifma(const ShoupDotOperands& ops, const GaloisPermutation* perm, std::size_t n,
                     const Modulus& m, std::uint64_t* out0, std::uint64_t* out1) {
  const V q = _mm512_set1_epi64(static_cast<long long>(m.value()));
  const V two_q = _mm512_add_epi64(q, q);
  // -m^-1 mod 2^52 by Newton iteration (m odd): inv <- inv * (2 - m * inv) doubles the bits.
  std::uint64_t inv = m.value();
  for (int i = 0; i < 6; ++i) inv *= 2 - m.value() * inv;
  const V q_neg_inv = _mm512_set1_epi64(static_cast<long long>((0 - inv) & ((1ULL << 52) - 1)));
  for (std::size_t t = 0; t < n; t += 8) {
    // Output block t/8 reads source block src[t/8] with its lanes shuffled (automorphism.h).
    V lanes = _mm512_setzero_si512();
    std::size_t from = t;
    if (perm != nullptr) {
      from = 8 * std::size_t{perm->block_source()[t / 8]};
      lanes = _mm512_cvtepu8_epi64(
          _mm_cvtsi64_si128(static_cast<long long>(perm->block_lanes()[t / 8])));
    }
    V acc0 = _mm512_setzero_si512(), acc1 = _mm512_setzero_si512();
    for (std::size_t j = 0; j < ops.terms; ++j) {
      V x = _mm512_loadu_si512(ops.x[j] + from);
      if (perm != nullptr) x = _mm512_permutexvar_epi64(lanes, x);
      // b_shoup / a_shoup hold the Montgomery forms for IFMA rows; b and a are not read.
      acc0 = sub_if_ge(_mm512_add_epi64(acc0, montgomery52(x, _mm512_loadu_si512(ops.b_shoup[j] + t),
                                                           q, q_neg_inv)),
                       two_q);
      acc1 = sub_if_ge(_mm512_add_epi64(acc1, montgomery52(x, _mm512_loadu_si512(ops.a_shoup[j] + t),
                                                           q, q_neg_inv)),
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
void shoup_dot2_ifma(const ShoupDotOperands&, const GaloisPermutation*, std::size_t, const Modulus&,
                     std::uint64_t*, std::uint64_t*) {
  PRIVSEARCH_CHECK(false, "IFMA dot kernel not compiled");
}
}  // namespace privsearch::ring::detail

#endif
