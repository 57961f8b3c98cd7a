// AVX-512 IFMA version of shoup_dot2 for rows modulo m < 2^50 (see dot_kernels.h), with keys in
// Montgomery form w' = w * 2^52 mod m, so that Montgomery reduction (REDC, R = 2^52) of
// sum_j x_j * w'_j is sum_j x_j * w_j mod m. Inputs x < m.
// Compiled with -mavx512f -mavx512ifma; called only after CPUID says so.
#include "ring/dot_kernels.h"

#if defined(__AVX512F__) && defined(__AVX512IFMA__)
#include <immintrin.h>

#include <algorithm>

#include "ring/avx512_blocks.h"

namespace privsearch::ring::detail {

namespace {
using V = __m512i;
}  // namespace

bool dot_ifma_compiled() { return true; }
// The key rows are read once per rotation while the digits, twiddles and scratch are reused:
// a non-temporal prefetch a little ahead keeps the key stream from evicting them (measured on
// Zen 4: the in-sequence inner product drops from ~45 to ~40 us per hoisted rotation).
constexpr std::size_t kKeyPrefetchAhead = 64;  // values (512 bytes)

void shoup_dot2_ifma(const ShoupDotOperands& ops, const GaloisPermutation* perm, std::size_t n,
                     const Modulus& m, std::uint64_t* out0, std::uint64_t* out1) {
  const V q = _mm512_set1_epi64(static_cast<long long>(m.value()));
  // -m^-1 mod 2^52 by Newton iteration (m odd): inv <- inv * (2 - m * inv) doubles the bits.
  std::uint64_t inv = m.value();
  for (int i = 0; i < 6; ++i) inv *= 2 - m.value() * inv;
  const V q_neg_inv = _mm512_set1_epi64(static_cast<long long>((0 - inv) & ((1ULL << 52) - 1)));
  const V round_up = _mm512_set1_epi64(static_cast<long long>((1ULL << 52) - 1));
  // One REDC per output and per group of up to kGroup terms instead of one per product: the
  // 104-bit products x_j * w'_j are summed as their low and high 52-bit halves (madd52lo/hi
  // accumulate for free), T = HI * 2^52 + LO, and with u = LO * (-m^-1) mod 2^52,
  //   (T + u m) / 2^52 = HI + hi52(u m) + ceil(LO / 2^52)
  // because LO + lo52(u m) is a multiple of 2^52 and lo52(u m) < 2^52. With x, w' < m < 2^50
  // each high half is below m^2 / 2^52 < m / 4, so for three terms the result is below 2m.
  constexpr std::size_t kGroup = 3;
  auto redc = [&](V lo, V hi) {
    const V u = _mm512_madd52lo_epu64(_mm512_setzero_si512(), lo, q_neg_inv);
    const V t = _mm512_madd52hi_epu64(hi, u, q);
    const V carry = _mm512_srli_epi64(_mm512_add_epi64(lo, round_up), 52);
    return sub_if_ge(_mm512_add_epi64(t, carry), q);
  };
  for (std::size_t t = 0; t < n; t += 8) {
    // Output block t/8 reads source block src[t/8] with its lanes shuffled (automorphism.h).
    V lanes = _mm512_setzero_si512();
    std::size_t from = t;
    if (perm != nullptr) {
      from = 8 * std::size_t{perm->block_source()[t / 8]};
      lanes = block_lane_indices(perm->block_lanes().data(), t / 8);
    }
    V acc0 = _mm512_setzero_si512(), acc1 = _mm512_setzero_si512();
    for (std::size_t g = 0; g < ops.terms; g += kGroup) {
      V lo0 = _mm512_setzero_si512(), hi0 = lo0, lo1 = lo0, hi1 = lo0;
      for (std::size_t j = g; j < std::min(ops.terms, g + kGroup); ++j) {
        V x = _mm512_loadu_si512(ops.x[j] + from);
        if (perm != nullptr) x = _mm512_permutexvar_epi64(lanes, x);
        // b_shoup / a_shoup hold the Montgomery forms for IFMA rows; b and a are not read.
        _mm_prefetch(reinterpret_cast<const char*>(ops.b_shoup[j] + t + kKeyPrefetchAhead),
                     _MM_HINT_NTA);
        _mm_prefetch(reinterpret_cast<const char*>(ops.a_shoup[j] + t + kKeyPrefetchAhead),
                     _MM_HINT_NTA);
        const V wb = _mm512_loadu_si512(ops.b_shoup[j] + t);
        const V wa = _mm512_loadu_si512(ops.a_shoup[j] + t);
        lo0 = _mm512_madd52lo_epu64(lo0, x, wb);
        hi0 = _mm512_madd52hi_epu64(hi0, x, wb);
        lo1 = _mm512_madd52lo_epu64(lo1, x, wa);
        hi1 = _mm512_madd52hi_epu64(hi1, x, wa);
      }
      acc0 = sub_if_ge(_mm512_add_epi64(acc0, redc(lo0, hi0)), q);
      acc1 = sub_if_ge(_mm512_add_epi64(acc1, redc(lo1, hi1)), q);
    }
    _mm512_storeu_si512(out0 + t, acc0);
    _mm512_storeu_si512(out1 + t, acc1);
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
