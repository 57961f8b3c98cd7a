#include "ckks/internal/key_switch.h"

#include <algorithm>
#include <array>

#include "ckks/internal/poly_util.h"
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

namespace {
// Row r (of rows q_0..q_l, P) of (u0, u1) = sum_j perm(D_j) * (b_j, a_j), q rows times P^-1
// (the keys' evaluation form).
void inner_product_row(const Params& params, const HoistedDigits& digits,
                       const ring::GaloisPermutation* perm, const KeySwitchKey& key, std::size_t r,
                       std::size_t key_row, std::uint64_t* u0, std::uint64_t* u1) {
  const std::size_t nd = digits.digits.size();
  constexpr std::size_t kMaxDigits = 64;
  PRIVSEARCH_CHECK(nd <= kMaxDigits, "too many key-switching digits");
  std::array<const std::uint64_t*, kMaxDigits> x{}, b{}, bs{}, a{}, as{};
  for (std::size_t j = 0; j < nd; ++j) {
    x[j] = digits.digits[j].row(r);
    b[j] = key.eval_b(j).row(key_row);
    bs[j] = key.eval_b_shoup(j).row(key_row);
    a[j] = key.eval_a(j).row(key_row);
    as[j] = key.eval_a_shoup(j).row(key_row);
  }
  const ring::ShoupDotOperands ops{nd, x.data(), b.data(), bs.data(), a.data(), as.data()};
  ring::shoup_dot2(ops, perm, params.n(), params.key_moduli()[key_row], u0, u1);
}
}  // namespace

void key_switch_inner_product(const Params& params, const HoistedDigits& digits,
                              const ring::GaloisPermutation* perm, const KeySwitchKey& key,
                              ring::RnsPoly& u0, ring::RnsPoly& u1) {
  const std::size_t n = params.n();
  const auto rows = key_rows(params, digits.level, true);
  PRIVSEARCH_CHECK(key.digits() == params.num_digits(), "key has the wrong number of digits");
  u0 = ring::RnsPoly::uninitialized(n, rows.size(), true);
  u1 = ring::RnsPoly::uninitialized(n, rows.size(), true);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    inner_product_row(params, digits, perm, key, r, rows[r], u0.row(r), u1.row(r));
  }
}

void key_switch_rotate(const Params& params, const HoistedDigits& digits,
                       const ring::GaloisPermutation& perm, const KeySwitchKey& key,
                       const ring::RnsPoly& c0, ring::RnsPoly& out0, ring::RnsPoly& out1) {
  const std::size_t n = params.n();
  const std::size_t level = digits.level;
  const std::size_t nq = level + 1;
  const auto rows = key_rows(params, level, true);
  PRIVSEARCH_CHECK(key.digits() == params.num_digits(), "key has the wrong number of digits");
  PRIVSEARCH_CHECK(c0.is_ntt() && c0.num_moduli() == nq, "rotate: c0 shape mismatch");
  thread_local ModDownScratch s0, s1;
  thread_local std::vector<std::uint64_t> t0, t1;
  s0.resize(params);
  s1.resize(params);
  t0.resize(n);
  t1.resize(n);
  // The P rows of the inner product go straight to the ModDown scratch ...
  for (std::size_t j = 0; j < params.num_p(); ++j) {
    inner_product_row(params, digits, &perm, key, nq + j, rows[nq + j], s0.p_rows.data() + j * n,
                      s1.p_rows.data() + j * n);
  }
  mod_down_prepare(params, s0);
  mod_down_prepare(params, s1);
  // ... then each q row is computed and consumed while it is still in cache:
  // c0' = sigma(c0) + u0/P, c1' = u1/P.
  out0 = ring::RnsPoly::uninitialized(n, nq, true);
  out1 = ring::RnsPoly::uninitialized(n, nq, true);
  for (std::size_t i = 0; i < nq; ++i) {
    inner_product_row(params, digits, &perm, key, i, rows[i], t0.data(), t1.data());
    mod_down_row(params, s0, i, t0.data(), true, out0.row(i), c0.row(i), &perm);
    mod_down_row(params, s1, i, t1.data(), true, out1.row(i), nullptr, nullptr);
  }
}

}  // namespace privsearch::ckks
