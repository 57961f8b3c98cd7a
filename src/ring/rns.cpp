#include "ring/rns.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>

#include "ring/shoup_kernels.h"

namespace privsearch::ring {

namespace {
using Limbs = std::vector<std::uint64_t>;

// a *= m (in place), growing by one limb if needed.
void limbs_mul_small(Limbs& a, u64 m) {
  u64 carry = 0;
  for (auto& limb : a) {
    const u128 t = static_cast<u128>(limb) * m + carry;
    limb = static_cast<u64>(t);
    carry = static_cast<u64>(t >> 64);
  }
  if (carry != 0) a.push_back(carry);
}

// a += b * m where b has the same number of limbs as a, returning the carry out.
u64 limbs_add_mul(u64* a, const u64* b, u64 m, std::size_t k) {
  u64 carry = 0;
  for (std::size_t i = 0; i < k; ++i) {
    const u128 t = static_cast<u128>(b[i]) * m + a[i] + carry;
    a[i] = static_cast<u64>(t);
    carry = static_cast<u64>(t >> 64);
  }
  return carry;
}

// Compare a and b (k limbs); -1, 0, 1.
int limbs_cmp(const u64* a, const u64* b, std::size_t k) {
  for (std::size_t i = k; i-- > 0;) {
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

// a -= b (k limbs), assuming a >= b.
void limbs_sub(u64* a, const u64* b, std::size_t k) {
  u64 borrow = 0;
  for (std::size_t i = 0; i < k; ++i) {
    const u64 bi = b[i] + borrow;
    const u64 nb = (bi < borrow) || (a[i] < bi) ? 1 : 0;
    a[i] -= bi;
    borrow = nb;
  }
}

double limbs_to_double(const u64* a, std::size_t k) {
  double r = 0;
  for (std::size_t i = k; i-- > 0;) r = r * 18446744073709551616.0 + static_cast<double>(a[i]);
  return r;
}
}  // namespace

Result<RnsBase> RnsBase::create(std::span<const std::uint64_t> moduli) {
  if (moduli.empty()) return invalid_argument_error("RNS base needs at least one modulus");
  RnsBase b;
  for (std::size_t i = 0; i < moduli.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (moduli[i] == moduli[j]) {
        return invalid_argument_error(fmt::format("RNS modulus {} appears twice", moduli[i]));
      }
    }
    PRIVSEARCH_ASSIGN_OR_RETURN(Modulus m, Modulus::create(moduli[i]));
    b.moduli_.push_back(m);
  }
  const std::size_t k = moduli.size();
  b.product_ = {1};
  for (u64 m : moduli) limbs_mul_small(b.product_, m);
  b.product_.resize(k, 0);
  b.half_product_ = b.product_;
  for (std::size_t i = 0; i < k; ++i) {
    b.half_product_[i] = (b.half_product_[i] >> 1) | (i + 1 < k ? b.half_product_[i + 1] << 63 : 0);
  }
  for (std::size_t i = 0; i < k; ++i) {
    Limbs p = {1};
    u64 inv_acc = 1;
    for (std::size_t j = 0; j < k; ++j) {
      if (j == i) continue;
      limbs_mul_small(p, moduli[j]);
      inv_acc = b.moduli_[i].mul(inv_acc, b.moduli_[i].reduce(moduli[j]));
    }
    p.resize(k, 0);
    b.punct_.push_back(p);
    if (inv_acc == 0) return invalid_argument_error("RNS moduli are not coprime");
    const u64 inv = b.moduli_[i].inv(inv_acc);
    b.punct_inv_.push_back(inv);
    b.punct_inv_shoup_.push_back(b.moduli_[i].shoup(inv));
  }
  return b;
}

double RnsBase::compose_centered(const std::uint64_t* residues, std::size_t stride) const {
  const std::size_t k = size();
  if (k == 1) {
    const u64 q = moduli_[0].value();
    const u64 x = residues[0];
    const u64 negative = ((q >> 1) - x) >> 63;  // x > q/2, branch-free
    return static_cast<double>(static_cast<std::int64_t>(x) -
                               static_cast<std::int64_t>(q & (u64{0} - negative)));
  }
  // Sum of k terms each < M; one extra limb of headroom, then reduce mod M by subtraction.
  std::vector<u64> acc(k + 1, 0);
  for (std::size_t i = 0; i < k; ++i) {
    const u64 t = moduli_[i].mul_shoup(residues[i * stride], punct_inv_[i], punct_inv_shoup_[i]);
    acc[k] += limbs_add_mul(acc.data(), punct_[i].data(), t, k);
  }
  // acc < k * M; subtract M (widened to k + 1 limbs) until below.
  std::vector<u64> m_wide = product_;
  m_wide.push_back(0);
  while (limbs_cmp(acc.data(), m_wide.data(), k + 1) >= 0)
    limbs_sub(acc.data(), m_wide.data(), k + 1);
  if (limbs_cmp(acc.data(), half_product_.data(), k) > 0) {
    std::vector<u64> neg = product_;
    limbs_sub(neg.data(), acc.data(), k);
    return -limbs_to_double(neg.data(), k);
  }
  return limbs_to_double(acc.data(), k);
}

Result<BaseConverter> BaseConverter::create(const RnsBase& from, const RnsBase& to) {
  const std::size_t kf = from.size();
  if (kf > 15) {
    // Bounded like the data primes (at most 15); keeps the lazy sums far from 2^64.
    return invalid_argument_error(fmt::format("base conversion from {} moduli (max 15)", kf));
  }
  BaseConverter c(from, to);
  c.punct_mod_to_.resize(to.size() * kf);
  for (std::size_t j = 0; j < to.size(); ++j) {
    for (std::size_t i = 0; i < kf; ++i) {
      u64 prod = 1;
      for (std::size_t l = 0; l < kf; ++l) {
        if (l == i) continue;
        prod = to[j].mul(prod, to[j].reduce(from[l].value()));
      }
      c.punct_mod_to_[j * kf + i] = prod;
    }
  }
  c.punct_mod_to_shoup_.resize(c.punct_mod_to_.size());
  for (std::size_t j = 0; j < to.size(); ++j) {
    for (std::size_t i = 0; i < kf; ++i) {
      c.punct_mod_to_shoup_[j * kf + i] = to[j].shoup(c.punct_mod_to_[j * kf + i]);
    }
  }
  c.identity_scaling_ = kf == 1;
  for (std::size_t j = 0; j < to.size(); ++j) {
    u64 m = 1;
    for (std::size_t i = 0; i < kf; ++i) m = to[j].mul(m, to[j].reduce(from[i].value()));
    c.m_mod_to_.push_back(m);
  }
  for (std::size_t i = 0; i < kf; ++i)
    c.inv_from_.push_back(1.0 / static_cast<double>(from[i].value()));
  return c;
}

void BaseConverter::convert(const std::uint64_t* in, std::uint64_t* out, std::size_t n,
                            std::size_t to_count) const {
  PRIVSEARCH_CHECK(to_count <= to_.size(), "base conversion to too many moduli");
  const std::size_t kf = from_.size();
  // t_i = [x_i * (M/m_i)^-1]_{m_i}, computed once per coefficient and source modulus (skipped
  // for a single source modulus, where it is x itself).
  std::vector<u64> t_storage;
  const u64* t = in;
  if (!identity_scaling_) {
    t_storage.resize(kf * n);
    for (std::size_t i = 0; i < kf; ++i) {
      mul_scalar_shoup_row(in + i * n, from_.punctured_inverse(i), t_storage.data() + i * n, n,
                           from_[i]);
    }
    t = t_storage.data();
  }
  // out_j = sum_i t_i * (M/m_i mod b_j): lazy Shoup products accumulated in [0, 2b).
  for (std::size_t j = 0; j < to_count; ++j) {
    const Modulus& b = to_[j];
    const u64* pm = punct_mod_to_.data() + j * kf;
    u64* o = out + j * n;
    if (kf == 1) {
      mul_scalar_shoup_row(t, pm[0], o, n, b);
      continue;
    }
    std::fill_n(o, n, 0);
    for (std::size_t i = 0; i < kf; ++i) mul_scalar_shoup_acc_lazy_row(t + i * n, pm[i], o, n, b);
    reduce_from_2q_row(o, n, b);
  }
}

void BaseConverter::prepare_centered(const std::uint64_t* in, std::uint64_t* t, std::uint64_t* u,
                                     std::size_t n) const {
  const std::size_t kf = from_.size();
  for (std::size_t i = 0; i < kf; ++i) {
    mul_scalar_shoup_row(in + i * n, from_.punctured_inverse(i), t + i * n, n, from_[i]);
  }
  // u = round(sum_i t_i / m_i): x = sum_i t_i (M/m_i) - u M is the centred representative.
  round_quotient_row(t, inv_from_.data(), kf, n, u);
}

void BaseConverter::convert_centered(const std::uint64_t* in, std::uint64_t* out, std::size_t n,
                                     std::span<const std::size_t> targets) const {
  const std::size_t kf = from_.size();
  if (kf == 1) {
    // One source prime: the centred lift is x or x - m_0 (branch-free per coefficient).
    for (std::size_t r = 0; r < targets.size(); ++r) {
      PRIVSEARCH_CHECK(targets[r] < to_.size(), "conversion target out of range");
      lift_centered_row(in, from_[0].value(), out + r * n, n, to_[targets[r]]);
    }
    return;
  }
  thread_local std::vector<u64> t_storage;
  thread_local std::vector<u64> u_storage;
  t_storage.resize(kf * n);
  u_storage.resize(n);
  prepare_centered(in, t_storage.data(), u_storage.data(), n);
  const u64* t = t_storage.data();
  for (std::size_t r = 0; r < targets.size(); ++r) {
    const std::size_t j = targets[r];
    PRIVSEARCH_CHECK(j < to_.size(), "conversion target out of range");
    const Modulus& b = to_[j];
    const u64* pm = punct_mod_to_.data() + j * kf;
    u64* o = out + r * n;
    // The correction -u * [M]_b is one more lazy term with multiplier [-M]_b (u <= kf).
    mul_scalar_shoup_row(u_storage.data(), b.neg(m_mod_to_[j]), o, n, b);
    for (std::size_t i = 0; i < kf; ++i) mul_scalar_shoup_acc_lazy_row(t + i * n, pm[i], o, n, b);
    reduce_from_2q_row(o, n, b);
  }
}

}  // namespace privsearch::ring
