// Rotation, conjugation and (double) hoisting: the key-switching half of the Evaluator.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "ckks/evaluator.h"
#include "ckks/internal/key_switch.h"
#include "ckks/internal/poly_util.h"
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
  return Hoisted{std::move(a), std::move(digits)};
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

// Extended ciphertexts keep their q rows divided by P (extended.h): P * c is just c there.
Result<ExtendedCiphertext> Evaluator::rotate_hoisted_extended(const Hoisted& h, int step,
                                                              const GaloisKeys& keys) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_keys(params_, keys));
  const int k = normalize_step(step, params_.slots());
  if (k == 0) return to_extended(h.ct);
  const std::size_t n = params_.n();
  PRIVSEARCH_ASSIGN_OR_RETURN(const KeySwitchKey* key, keys.key_for_step(step, n));
  const auto& perm = permutation(ring::galois_elt_for_step(k, n));
  ring::RnsPoly u0, u1;
  key_switch_inner_product(params_, h.digits, &perm, *key, u0, u1);
  // u0 += sigma(P c0) / P = sigma(c0) on the q rows (P c0 vanishes modulo the special primes).
  for (std::size_t i = 0; i <= h.ct.level(); ++i) {
    perm.apply_add(h.ct.c0().row(i), u0.row(i), params_.key_moduli()[i]);
  }
  return ExtendedCiphertext(params_.id(), h.ct.level(), h.ct.scale(), std::move(u0), std::move(u1));
}

Result<ExtendedCiphertext> Evaluator::to_extended(const Ciphertext& a) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_ciphertext(a, "ciphertext"));
  const std::size_t n = params_.n(), level = a.level();
  const auto rows = key_rows(params_, level, true);
  // P * a: zero modulo the special primes; on the q rows (P a) / P = a.
  ring::RnsPoly u0(n, rows.size(), true), u1(n, rows.size(), true);
  for (std::size_t i = 0; i <= level; ++i) {
    std::copy_n(a.c0().row(i), n, u0.row(i));
    std::copy_n(a.c1().row(i), n, u1.row(i));
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
  mod_down_inplace(params_, level, a.mutable_c0(), true);
  mod_down_inplace(params_, level, a.mutable_c1(), true);
  return Ciphertext(params_.id(), level, a.scale(), std::move(a.mutable_c0()),
                    std::move(a.mutable_c1()));
}

}  // namespace privsearch::ckks
