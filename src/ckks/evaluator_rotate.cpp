// Rotation, conjugation and (double) hoisting: the key-switching half of the Evaluator.
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "ckks/evaluator.h"
#include "ckks/poly_util.h"
#include "ring/shoup_kernels.h"

namespace privsearch::ckks {

struct Evaluator::PermutationCache {
  std::mutex mu;
  std::map<std::uint64_t, std::unique_ptr<ring::GaloisPermutation>> perms;
};

Evaluator::Evaluator(Params params)
    : params_(std::move(params)), perms_(std::make_shared<PermutationCache>()) {}

const ring::GaloisPermutation& Evaluator::permutation(std::uint64_t galois_elt) const {
  std::lock_guard<std::mutex> lock(perms_->mu);
  auto& slot = perms_->perms[galois_elt];
  if (!slot) {
    slot = std::make_unique<ring::GaloisPermutation>(
        ring::GaloisPermutation::create(galois_elt, params_.n()).value());
  }
  return *slot;
}

Result<Evaluator::Hoisted> Evaluator::hoist(const Ciphertext& a) const {
  return hoist(Ciphertext(a));
}

Result<Evaluator::Hoisted> Evaluator::hoist(Ciphertext&& a) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_ciphertext(a, "ciphertext"));
  HoistedDigits digits = decompose_for_key_switch(params_, a.c1(), a.level());
  const std::size_t level = a.level();
  Hoisted h{std::move(a), std::move(digits),
            ring::RnsPoly::uninitialized(params_.n(), level + 1, true)};
  for (std::size_t i = 0; i <= level; ++i) {
    ring::mul_scalar_shoup_row(h.ct.c0().row(i), params_.p_mod_q(i), h.p_c0.row(i), params_.n(),
                               params_.key_moduli()[i]);
  }
  return h;
}

namespace {
Status check_keys(const Params& params, const GaloisKeys& keys) {
  return check_params_id(params, keys.params_id(), "Galois key set");
}
}  // namespace

Result<Ciphertext> Evaluator::apply_galois(const Hoisted& h, std::uint64_t galois_elt,
                                           const KeySwitchKey& key) const {
  const std::size_t level = h.ct.level();
  const auto& perm = permutation(galois_elt);
  ring::RnsPoly u0, u1;
  key_switch_rotate(params_, h.digits, perm, key, h.ct.c0(), u0, u1);
  return Ciphertext(params_.id(), level, h.ct.scale(), std::move(u0), std::move(u1));
}

Result<Ciphertext> Evaluator::rotate_hoisted(const Hoisted& h, int step,
                                             const GaloisKeys& keys) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_keys(params_, keys));
  const int k = normalize_step(step, params_.slots());
  if (k == 0) return h.ct;
  PRIVSEARCH_ASSIGN_OR_RETURN(const KeySwitchKey* key, keys.key_for_step(step, params_.n()));
  return apply_galois(h, ring::galois_elt_for_step(k, params_.n()), *key);
}

Result<Ciphertext> Evaluator::rotate(const Ciphertext& a, int step, const GaloisKeys& keys) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_keys(params_, keys));
  PRIVSEARCH_RETURN_IF_ERROR(check_ciphertext(a, "ciphertext"));
  const int k = normalize_step(step, params_.slots());
  if (k == 0) return a;
  // Look the key up before the (costly) decomposition so a missing step fails fast.
  PRIVSEARCH_ASSIGN_OR_RETURN(const KeySwitchKey* key, keys.key_for_step(step, params_.n()));
  PRIVSEARCH_ASSIGN_OR_RETURN(const Hoisted h, hoist(a));
  return apply_galois(h, ring::galois_elt_for_step(k, params_.n()), *key);
}

Result<Ciphertext> Evaluator::conjugate(const Ciphertext& a, const GaloisKeys& keys) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_keys(params_, keys));
  PRIVSEARCH_RETURN_IF_ERROR(check_ciphertext(a, "ciphertext"));
  const std::uint64_t g = ring::galois_elt_conjugate(params_.n());
  PRIVSEARCH_ASSIGN_OR_RETURN(const KeySwitchKey* key, keys.key_for_elt(g));
  PRIVSEARCH_ASSIGN_OR_RETURN(const Hoisted h, hoist(a));
  return apply_galois(h, g, *key);
}

Result<ExtendedCiphertext> Evaluator::rotate_hoisted_extended(const Hoisted& h, int step,
                                                              const GaloisKeys& keys) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_keys(params_, keys));
  const std::size_t level = h.ct.level();
  const std::size_t n = params_.n();
  const auto rows = key_rows(params_, level, true);
  const int k = normalize_step(step, params_.slots());
  ring::RnsPoly u0, u1;
  const ring::GaloisPermutation* perm = nullptr;
  if (k != 0) {
    PRIVSEARCH_ASSIGN_OR_RETURN(const KeySwitchKey* key, keys.key_for_step(step, n));
    perm = &permutation(ring::galois_elt_for_step(k, n));
    key_switch_inner_product(params_, h.digits, perm, *key, u0, u1);
  } else {
    // P * (c0, c1): zero modulo P, [P]_{q_i} * c modulo q_i.
    u0 = ring::RnsPoly(n, rows.size(), true);
    u1 = ring::RnsPoly(n, rows.size(), true);
    for (std::size_t i = 0; i <= level; ++i) {
      ring::mul_scalar_shoup_row(h.ct.c1().row(i), params_.p_mod_q(i), u1.row(i), n,
                                 params_.key_moduli()[i]);
    }
  }
  // u0 += sigma(P * c0) on the q rows (P * anything is 0 modulo the special primes).
  for (std::size_t i = 0; i <= level; ++i) {
    const std::uint64_t qv = params_.key_moduli()[i].value();
    const std::uint64_t* src = h.p_c0.row(i);
    std::uint64_t* o = u0.row(i);
    (void)qv;
    if (perm != nullptr) {
      perm->apply_add(src, o, params_.key_moduli()[i]);
    } else {
      ring::add_mod_row(src, o, o, n, params_.key_moduli()[i]);
    }
  }
  return ExtendedCiphertext(params_.id(), level, h.ct.scale(), std::move(u0), std::move(u1));
}

Result<ExtendedCiphertext> Evaluator::to_extended(const Ciphertext& a) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_ciphertext(a, "ciphertext"));
  const std::size_t n = params_.n(), level = a.level();
  const auto rows = key_rows(params_, level, true);
  ring::RnsPoly u0(n, rows.size(), true), u1(n, rows.size(), true);
  for (std::size_t i = 0; i <= level; ++i) {
    const ring::Modulus& qi = params_.key_moduli()[i];
    ring::mul_scalar_shoup_row(a.c0().row(i), params_.p_mod_q(i), u0.row(i), n, qi);
    ring::mul_scalar_shoup_row(a.c1().row(i), params_.p_mod_q(i), u1.row(i), n, qi);
  }
  return ExtendedCiphertext(params_.id(), level, a.scale(), std::move(u0), std::move(u1));
}

Status Evaluator::multiply_plain_accumulate(ExtendedCiphertext& acc, const ExtendedCiphertext& x,
                                            const ExtendedPlaintext& p) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params_, x.params_id(), "extended ciphertext"));
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params_, p.params_id(), "extended plaintext"));
  if (x.level() != p.level()) {
    return failed_precondition_error(
        fmt::format("extended product: levels differ ({} vs {})", x.level(), p.level()));
  }
  const auto rows = key_rows(params_, x.level(), true);
  const auto moduli = moduli_for_rows(params_, rows);
  const double scale = x.scale() * p.scale();
  const bool empty = acc.c0().num_moduli() == 0;
  if (!empty) {
    PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params_, acc.params_id(), "accumulator"));
    if (acc.level() != x.level() || !scales_match(acc.scale(), scale)) {
      return failed_precondition_error("extended accumulate: level or scale mismatch");
    }
  } else {
    acc = ExtendedCiphertext(params_.id(), x.level(), scale,
                             ring::RnsPoly(params_.n(), rows.size(), true),
                             ring::RnsPoly(params_.n(), rows.size(), true));
  }
  ring::multiply_add(x.c0(), p.poly(), acc.mutable_c0(), moduli);
  ring::multiply_add(x.c1(), p.poly(), acc.mutable_c1(), moduli);
  return Status();
}

Status Evaluator::add_inplace(ExtendedCiphertext& a, const ExtendedCiphertext& b) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params_, a.params_id(), "left operand"));
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params_, b.params_id(), "right operand"));
  if (a.level() != b.level() || !scales_match(a.scale(), b.scale())) {
    return failed_precondition_error("extended add: level or scale mismatch");
  }
  const auto moduli = moduli_for_rows(params_, key_rows(params_, a.level(), true));
  ring::add_inplace(a.mutable_c0(), b.c0(), moduli);
  ring::add_inplace(a.mutable_c1(), b.c1(), moduli);
  return Status();
}

Result<Ciphertext> Evaluator::mod_down(ExtendedCiphertext a) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params_, a.params_id(), "extended ciphertext"));
  const std::size_t level = a.level();
  const std::size_t rows = level + 1 + params_.num_p();
  if (a.c0().num_moduli() != rows || a.c1().num_moduli() != rows) {
    return failed_precondition_error("extended ciphertext does not match its level");
  }
  mod_down_inplace(params_, level, a.mutable_c0());
  mod_down_inplace(params_, level, a.mutable_c1());
  return Ciphertext(params_.id(), level, a.scale(), std::move(a.mutable_c0()),
                    std::move(a.mutable_c1()));
}

}  // namespace privsearch::ckks
