// AVX-512F/DQ version of shoup_dot2 (see dot_kernels.h). The lazy Shoup product is
// ring/avx512dq_shoup.h: qhat may be up to 2 low, so x*w - qhat*m lies in [0, 4m) and one
// conditional subtraction of 2m brings it to [0, 2m).
// Compiled with -mavx512f -mavx512dq; called only after CPUID says so.
#include "ring/dot_kernels.h"

#if defined(__AVX512F__) && defined(__AVX512DQ__)
#include <immintrin.h>

#include "ring/avx512_blocks.h"
#include "ring/avx512dq_shoup.h"

namespace privsearch::ring::detail {

namespace {
using V = __m512i;
}  // namespace

bool dot_avx512_compiled() { return true; }

void shoup_dot2_avx512(const ShoupDotOperands& ops, const GaloisPermutation* perm, std::size_t n,
                       const Modulus& m, std::uint64_t* out0, std::uint64_t* out1) {
  const V q = _mm512_set1_epi64(static_cast<long long>(m.value()));
  const V two_q = _mm512_add_epi64(q, q);
  for (std::size_t t = 0; t < n; t += 8) {
    // Output block t/8 reads source block src[t/8] with its lanes shuffled (automorphism.h).
    V lanes = _mm512_setzero_si512();
    std::size_t from = t;
    if (perm != nullptr) {
      from = 8 * std::size_t{perm->block_source()[t / 8]};
      lanes = block_lane_indices(perm->block_lanes().data(), t / 8);
    }
    V acc0 = _mm512_setzero_si512(), acc1 = _mm512_setzero_si512();
    for (std::size_t j = 0; j < ops.terms; ++j) {
      V x = _mm512_loadu_si512(ops.x[j] + from);
      if (perm != nullptr) x = _mm512_permutexvar_epi64(lanes, x);
      acc0 = sub_if_ge(
          _mm512_add_epi64(acc0, lazy_shoup_dq(x, _mm512_loadu_si512(ops.b[j] + t),
                                               _mm512_loadu_si512(ops.b_shoup[j] + t), q, two_q)),
          two_q);
      acc1 = sub_if_ge(
          _mm512_add_epi64(acc1, lazy_shoup_dq(x, _mm512_loadu_si512(ops.a[j] + t),
                                               _mm512_loadu_si512(ops.a_shoup[j] + t), q, two_q)),
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
void shoup_dot2_avx512(const ShoupDotOperands& ops, const GaloisPermutation* perm, std::size_t n,
                       const Modulus& m, std::uint64_t* out0, std::uint64_t* out1) {
  shoup_dot2_scalar(ops, perm, n, m, out0, out1);
}
}  // namespace privsearch::ring::detail

#endif
