// AVX-512 IFMA kernel of MontgomeryBatch (compiled with -mavx512ifma, called after a CPUID
// check). Same column arithmetic as MontgomeryBatch::mul_scalar, eight lanes at once.
#include <immintrin.h>

#include <cstring>

#include "pir/paillier/mont_batch.h"

namespace privsearch::pir::detail {

bool mont_ifma_compiled() { return true; }

void mont_mul8_ifma(const std::uint64_t* a, const std::uint64_t* b, const std::uint64_t* m,
                    std::uint64_t k0, std::size_t limbs, std::uint64_t* out,
                    std::uint64_t* scratch) {
  const std::size_t L = limbs;
  __m512i* acc = reinterpret_cast<__m512i*>(scratch);
  const __m512i zero = _mm512_setzero_si512();
  const __m512i mask52 = _mm512_set1_epi64(static_cast<long long>((std::uint64_t{1} << 52) - 1));
  const __m512i k0v = _mm512_set1_epi64(static_cast<long long>(k0));
  for (std::size_t j = 0; j < 2 * L + 2; ++j) _mm512_storeu_si512(acc + j, zero);
  const __m512i* bv = reinterpret_cast<const __m512i*>(b);
  const __m512i* av = reinterpret_cast<const __m512i*>(a);
  for (std::size_t i = 0; i < L; ++i) {
    const __m512i ai = _mm512_loadu_si512(av + i);
    const __m512i b0 = _mm512_loadu_si512(bv);
    const __m512i m0 = _mm512_set1_epi64(static_cast<long long>(m[0]));
    __m512i c0 = _mm512_madd52lo_epu64(_mm512_loadu_si512(acc + i), ai, b0);
    const __m512i mi = _mm512_madd52lo_epu64(zero, c0, k0v);
    c0 = _mm512_madd52lo_epu64(c0, mi, m0);
    __m512i hprev = _mm512_madd52hi_epu64(_mm512_srli_epi64(c0, 52), ai, b0);
    hprev = _mm512_madd52hi_epu64(hprev, mi, m0);
    for (std::size_t j = 1; j < L; ++j) {
      const __m512i bj = _mm512_loadu_si512(bv + j);
      const __m512i mj = _mm512_set1_epi64(static_cast<long long>(m[j]));
      __m512i c = _mm512_add_epi64(_mm512_loadu_si512(acc + i + j), hprev);
      c = _mm512_madd52lo_epu64(c, ai, bj);
      c = _mm512_madd52lo_epu64(c, mi, mj);
      _mm512_storeu_si512(acc + i + j, c);
      hprev = _mm512_madd52hi_epu64(_mm512_madd52hi_epu64(zero, ai, bj), mi, mj);
    }
    _mm512_storeu_si512(acc + i + L, _mm512_add_epi64(_mm512_loadu_si512(acc + i + L), hprev));
  }
  __m512i carry = zero;
  __m512i* ov = reinterpret_cast<__m512i*>(out);
  for (std::size_t j = 0; j < L; ++j) {
    const __m512i v = _mm512_add_epi64(_mm512_loadu_si512(acc + L + j), carry);
    _mm512_storeu_si512(ov + j, _mm512_and_si512(v, mask52));
    carry = _mm512_srli_epi64(v, 52);
  }
}

}  // namespace privsearch::pir::detail
