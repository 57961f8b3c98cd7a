#include "ckks/key_switch.h"

#include <algorithm>

#include "ckks/poly_util.h"
#include "core/check.h"
#include "ring/dot_kernels.h"

namespace privsearch::ckks {

HoistedDigits decompose_for_key_switch(const Params& params, const ring::RnsPoly& c1,
                                       std::size_t level) {
  PRIVSEARCH_CHECK(c1.is_ntt() && c1.num_moduli() == level + 1, "decompose: c1 shape mismatch");
  const std::size_t n = params.n();
  const auto rows = key_rows(params, level, true);
  HoistedDigits h;
  h.level = level;
  h.digits.reserve(level + 1);
  std::vector<std::uint64_t> coeff(n);
  for (std::size_t j = 0; j <= level; ++j) {
    std::copy_n(c1.row(j), n, coeff.data());
    params.ntt(j).inverse(coeff.data());
    const std::uint64_t half_qj = params.key_moduli()[j].value() >> 1;
    auto d = ring::RnsPoly::uninitialized(n, rows.size(), true);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      std::uint64_t* out = d.row(r);
      if (rows[r] == j) {
        std::copy_n(c1.row(j), n, out);  // already the NTT form modulo q_j
        continue;
      }
      // Centred lift: x > q_j/2 stands for x - q_j. A digit with mean q_j/2 would multiply
      // the key noise by the all-ones polynomial, whose embedding reaches 2n/pi near 1.
      const ring::Modulus& m = params.key_moduli()[rows[r]];
      const std::uint64_t qj_mod_m = m.reduce(params.key_moduli()[j].value());
      for (std::size_t t = 0; t < n; ++t) {
        const std::uint64_t x = coeff[t];
        const std::uint64_t negative = (half_qj - x) >> 63;
        out[t] = m.sub(m.reduce(x), qj_mod_m & (std::uint64_t{0} - negative));
      }
      params.ntt(rows[r]).forward(out);
    }
    h.digits.push_back(std::move(d));
  }
  return h;
}

void key_switch_inner_product(const Params& params, const HoistedDigits& digits,
                              const std::uint32_t* perm, const KeySwitchKey& key,
                              ring::RnsPoly& u0, ring::RnsPoly& u1) {
  const std::size_t n = params.n();
  const std::size_t level = digits.level;
  const auto rows = key_rows(params, level, true);
  PRIVSEARCH_CHECK(key.digits() == params.num_q(), "key has the wrong number of digits");
  u0 = ring::RnsPoly::uninitialized(n, rows.size(), true);
  u1 = ring::RnsPoly::uninitialized(n, rows.size(), true);
  const std::size_t nd = level + 1;
  std::vector<const std::uint64_t*> x(nd), b(nd), bs(nd), a(nd), as(nd);
  const ring::ShoupDotOperands ops{nd, x.data(), b.data(), bs.data(), a.data(), as.data()};
  // Permuting each digit row once into scratch and streaming it is faster than gathering
  // through the permutation inside the kernel (measured: vpgatherqq is slow on Zen 4).
  thread_local std::vector<std::uint64_t> permuted;
  if (perm != nullptr) permuted.resize(nd * n);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (std::size_t j = 0; j < nd; ++j) {
      x[j] = digits.digits[j].row(r);
      if (perm != nullptr) {
        std::uint64_t* dst = permuted.data() + j * n;
        for (std::size_t t = 0; t < n; ++t) dst[t] = x[j][perm[t]];
        x[j] = dst;
      }
      b[j] = key.b(j).row(rows[r]);
      bs[j] = key.b_shoup(j).row(rows[r]);
      a[j] = key.a(j).row(rows[r]);
      as[j] = key.a_shoup(j).row(rows[r]);
    }
    ring::shoup_dot2(ops, nullptr, n, params.key_moduli()[rows[r]], u0.row(r), u1.row(r));
  }
}

}  // namespace privsearch::ckks
