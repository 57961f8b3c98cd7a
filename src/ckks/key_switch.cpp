#include "ckks/key_switch.h"

#include <algorithm>

#include "ckks/poly_util.h"
#include "core/check.h"
#include "ring/dot_kernels.h"
#include "ring/shoup_kernels.h"

namespace privsearch::ckks {

HoistedDigits decompose_for_key_switch(const Params& params, const ring::RnsPoly& c1,
                                       std::size_t level) {
  PRIVSEARCH_CHECK(c1.is_ntt() && c1.num_moduli() == level + 1, "decompose: c1 shape mismatch");
  const std::size_t n = params.n();
  const auto rows = key_rows(params, level, true);
  HoistedDigits h;
  h.level = level;
  thread_local std::vector<std::uint64_t> coeff, converted;
  for (std::size_t j = 0; j < params.num_digits() && params.digit_first(j) <= level; ++j) {
    const std::size_t first = params.digit_first(j);
    const std::size_t count = std::min(params.digit_size(j), level + 1 - first);
    // [c1]_{Q_j} in coefficient form (rows first..first+count-1).
    coeff.resize(count * n);
    for (std::size_t i = 0; i < count; ++i) {
      std::copy_n(c1.row(first + i), n, coeff.data() + i * n);
      params.ntt(first + i).inverse(coeff.data() + i * n);
    }
    // Centred lift to every other row of Q_l * P (exact: see ring/rns.h).
    std::vector<std::size_t> targets, target_rows;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      if (rows[r] < first || rows[r] >= first + count) {
        targets.push_back(rows[r]);
        target_rows.push_back(r);
      }
    }
    converted.resize(targets.size() * n);
    params.digit_converter(j, count).convert_centered(coeff.data(), converted.data(), n, targets);
    auto d = ring::RnsPoly::uninitialized(n, rows.size(), true);
    for (std::size_t i = 0; i < count; ++i) std::copy_n(c1.row(first + i), n, d.row(first + i));
    for (std::size_t t = 0; t < targets.size(); ++t) {
      std::uint64_t* out = d.row(target_rows[t]);
      std::copy_n(converted.data() + t * n, n, out);
      params.ntt(targets[t]).forward(out);
    }
    h.digits.push_back(std::move(d));
  }
  return h;
}

void key_switch_inner_product(const Params& params, const HoistedDigits& digits,
                              const ring::GaloisPermutation* perm, const KeySwitchKey& key,
                              ring::RnsPoly& u0, ring::RnsPoly& u1) {
  const std::size_t n = params.n();
  const std::size_t level = digits.level;
  const auto rows = key_rows(params, level, true);
  PRIVSEARCH_CHECK(key.digits() == params.num_digits(), "key has the wrong number of digits");
  u0 = ring::RnsPoly::uninitialized(n, rows.size(), true);
  u1 = ring::RnsPoly::uninitialized(n, rows.size(), true);
  const std::size_t nd = digits.digits.size();
  std::vector<const std::uint64_t*> x(nd), b(nd), bs(nd), a(nd), as(nd);
  const ring::ShoupDotOperands ops{nd, x.data(), b.data(), bs.data(), a.data(), as.data()};
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (std::size_t j = 0; j < nd; ++j) {
      x[j] = digits.digits[j].row(r);
      b[j] = key.b(j).row(rows[r]);
      bs[j] = key.b_shoup(j).row(rows[r]);
      a[j] = key.a(j).row(rows[r]);
      as[j] = key.a_shoup(j).row(rows[r]);
    }
    ring::shoup_dot2(ops, perm, n, params.key_moduli()[rows[r]], u0.row(r), u1.row(r));
  }
}

}  // namespace privsearch::ckks
