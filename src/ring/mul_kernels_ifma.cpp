// AVX-512 IFMA + FP element-wise modular products for q < 2^50 (see rns_poly.h).
//
// a, b < q: the quotient floor(a*b / q) < q < 2^50 is estimated in double precision as
// floor(fl(fl(a*b) * fl(1/q))), off by at most one either way (relative error below 2^-51 on a
// value below 2^50); r = a*b - qhat*q is then exact from the low 52 bits of two IFMA products,
// lies in [-q, 2q), and two conditional corrections bring it to [0, q).
// Compiled with -mavx512f -mavx512dq -mavx512ifma; called only after CPUID says so.
#include "ring/rns_poly.h"

#if defined(__AVX512F__) && defined(__AVX512IFMA__) && defined(__AVX512DQ__)
#include <immintrin.h>

namespace privsearch::ring::detail {

namespace {
using V = __m512i;
struct Consts {
  V q, mask52, half;
  __m512d inv_q;
};
inline V mulmod(V a, V b, const Consts& c) {
  const __m512d fa = _mm512_cvtepu64_pd(a), fb = _mm512_cvtepu64_pd(b);
  const __m512d est = _mm512_roundscale_pd(_mm512_mul_pd(_mm512_mul_pd(fa, fb), c.inv_q),
                                           _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  const V qhat = _mm512_cvttpd_epu64(est);
  const V zero = _mm512_setzero_si512();
  V r = _mm512_and_si512(
      _mm512_sub_epi64(_mm512_madd52lo_epu64(zero, a, b), _mm512_madd52lo_epu64(zero, qhat, c.q)),
      c.mask52);
  // r represents a value in [-q, 2q) modulo 2^52: values >= 2^51 are negative.
  const __mmask8 neg = _mm512_cmpge_epu64_mask(r, c.half);
  r = _mm512_mask_and_epi64(r, neg, _mm512_add_epi64(r, c.q), c.mask52);
  return _mm512_min_epu64(r, _mm512_sub_epi64(r, c.q));
}
Consts consts(std::uint64_t q) {
  return {_mm512_set1_epi64(static_cast<long long>(q)), _mm512_set1_epi64((1LL << 52) - 1),
          _mm512_set1_epi64(1LL << 51), _mm512_set1_pd(1.0 / static_cast<double>(q))};
}
}  // namespace

bool mul_ifma_compiled() { return true; }

void mul_row_ifma(const std::uint64_t* a, const std::uint64_t* b, std::uint64_t* out, std::size_t n,
                  std::uint64_t q) {
  const Consts c = consts(q);
  for (std::size_t t = 0; t < n; t += 8) {
    _mm512_storeu_si512(out + t, mulmod(_mm512_loadu_si512(a + t), _mm512_loadu_si512(b + t), c));
  }
}

void mul_add_row_ifma(const std::uint64_t* a, const std::uint64_t* b, std::uint64_t* acc,
                      std::size_t n, std::uint64_t q) {
  const Consts c = consts(q);
  for (std::size_t t = 0; t < n; t += 8) {
    const V p = mulmod(_mm512_loadu_si512(a + t), _mm512_loadu_si512(b + t), c);
    const V s = _mm512_add_epi64(_mm512_loadu_si512(acc + t), p);
    _mm512_storeu_si512(acc + t, _mm512_min_epu64(s, _mm512_sub_epi64(s, c.q)));
  }
}

}  // namespace privsearch::ring::detail

#else

#include "core/check.h"

namespace privsearch::ring::detail {
bool mul_ifma_compiled() { return false; }
void mul_row_ifma(const std::uint64_t*, const std::uint64_t*, std::uint64_t*, std::size_t,
                  std::uint64_t) {
  PRIVSEARCH_CHECK(false, "IFMA kernel not compiled");
}
void mul_add_row_ifma(const std::uint64_t*, const std::uint64_t*, std::uint64_t*, std::size_t,
                      std::uint64_t) {
  PRIVSEARCH_CHECK(false, "IFMA kernel not compiled");
}
}  // namespace privsearch::ring::detail

#endif
