#include "ckks/key_switch.h"

#include <algorithm>

#include "ckks/poly_util.h"
#include "core/check.h"

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
    ring::RnsPoly d(n, rows.size(), true);
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
  u0 = ring::RnsPoly(n, rows.size(), true);
  u1 = ring::RnsPoly(n, rows.size(), true);
  const std::size_t nd = level + 1;
  // Products are below 2^122 and at most 15 digits are summed, so 128-bit accumulators hold
  // the exact sum and one Barrett reduction per output suffices.
  std::vector<const std::uint64_t*> d(nd), b(nd), a(nd);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const ring::Modulus& m = params.key_moduli()[rows[r]];
    for (std::size_t j = 0; j < nd; ++j) {
      d[j] = digits.digits[j].row(r);
      b[j] = key.b(j).row(rows[r]);
      a[j] = key.a(j).row(rows[r]);
    }
    std::uint64_t* o0 = u0.row(r);
    std::uint64_t* o1 = u1.row(r);
    for (std::size_t t = 0; t < n; ++t) {
      const std::size_t src = perm != nullptr ? perm[t] : t;
      ring::u128 acc0 = 0, acc1 = 0;
      for (std::size_t j = 0; j < nd; ++j) {
        const std::uint64_t x = d[j][src];
        acc0 += static_cast<ring::u128>(x) * b[j][t];
        acc1 += static_cast<ring::u128>(x) * a[j][t];
      }
      o0[t] = m.reduce_u128(acc0);
      o1[t] = m.reduce_u128(acc1);
    }
  }
}

}  // namespace privsearch::ckks
