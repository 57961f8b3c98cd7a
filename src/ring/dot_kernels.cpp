#include "ring/dot_kernels.h"

#include "core/check.h"
#include "ring/ntt.h"

namespace privsearch::ring {

bool dot_uses_ifma(const Modulus& m) {
  return m.value() < (u64{1} << 50) && cpu_has_ifma() && detail::dot_ifma_compiled();
}

void shoup_companions(const std::uint64_t* w, std::size_t n, const Modulus& m, std::uint64_t* out) {
  if (dot_uses_ifma(m)) {
    // Montgomery form w * 2^52 mod m.
    const u64 r = m.reduce_u128(static_cast<u128>(1) << 52);
    const u64 rs = m.shoup(r);
    for (std::size_t t = 0; t < n; ++t) out[t] = m.mul_shoup(w[t], r, rs);
    return;
  }
  for (std::size_t t = 0; t < n; ++t) out[t] = m.shoup(w[t]);
}

void shoup_dot2_scalar(const ShoupDotOperands& ops, const GaloisPermutation* perm, std::size_t n,
                       const Modulus& m, std::uint64_t* out0, std::uint64_t* out1) {
  const u64 q = m.value(), two_q = 2 * q;
  for (std::size_t t = 0; t < n; ++t) {
    const std::size_t src = perm != nullptr ? perm->table()[t] : t;
    u64 acc0 = 0, acc1 = 0;
    for (std::size_t j = 0; j < ops.terms; ++j) {
      const u64 x = ops.x[j][src];
      acc0 = reduce_once(acc0 + m.mul_shoup_lazy(x, ops.b[j][t], ops.b_shoup[j][t]), two_q);
      acc1 = reduce_once(acc1 + m.mul_shoup_lazy(x, ops.a[j][t], ops.a_shoup[j][t]), two_q);
    }
    out0[t] = reduce_once(acc0, q);
    out1[t] = reduce_once(acc1, q);
  }
}

void shoup_dot2(const ShoupDotOperands& ops, const GaloisPermutation* perm, std::size_t n,
                const Modulus& m, std::uint64_t* out0, std::uint64_t* out1) {
  PRIVSEARCH_CHECK(perm == nullptr || perm->n() == n, "dot kernel: permutation size mismatch");
  if (dot_uses_ifma(m)) {
    PRIVSEARCH_CHECK(n % 8 == 0, "IFMA dot kernel needs n divisible by 8");
    detail::shoup_dot2_ifma(ops, perm, n, m, out0, out1);
  } else if (n % 8 == 0 && cpu_has_avx512dq()) {
    detail::shoup_dot2_avx512(ops, perm, n, m, out0, out1);
  } else {
    shoup_dot2_scalar(ops, perm, n, m, out0, out1);
  }
}

}  // namespace privsearch::ring
