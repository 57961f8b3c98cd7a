#include "ckks/client/encryptor.h"

#include <fmt/format.h>

#include "ckks/client/noise.h"
#include "ckks/internal/poly_util.h"

namespace privsearch::ckks {

Status Encryptor::check_plaintext(const Plaintext& pt) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params_, pt.params_id(), "plaintext"));
  if (pt.level() > params_.max_level() || pt.poly().num_moduli() != pt.level() + 1 ||
      pt.poly().n() != params_.n() || !pt.poly().is_ntt()) {
    return failed_precondition_error("plaintext polynomial does not match its level");
  }
  return Status();
}

Result<Ciphertext> Encryptor::encrypt_symmetric(const SecretKey& sk, const Plaintext& pt,
                                                Prng& prng) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params_, sk.params_id(), "secret key"));
  PRIVSEARCH_RETURN_IF_ERROR(check_plaintext(pt));
  const auto rows = key_rows(params_, pt.level(), false);
  Seed seed{};
  prng.fill(seed);
  ring::RnsPoly a = expand_uniform(params_, rows, seed, 0);
  ring::RnsPoly c0 = sample_error_ntt(params_, rows, prng);
  const std::size_t n = params_.n();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ring::Modulus& q = params_.key_moduli()[i];
    std::uint64_t* out = c0.row(i);
    const std::uint64_t* ai = a.row(i);
    const std::uint64_t* si = sk.row(i);
    const std::uint64_t* mi = pt.poly().row(i);
    for (std::size_t k = 0; k < n; ++k) {
      out[k] = q.add(q.sub(out[k], q.mul(ai[k], si[k])), mi[k]);
    }
  }
  return Ciphertext(params_.id(), pt.level(), pt.scale(), std::move(c0), std::move(a), seed);
}

Result<Ciphertext> Encryptor::encrypt_public(const PublicKey& pk, const Plaintext& pt,
                                             Prng& prng) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params_, pk.params_id(), "public key"));
  PRIVSEARCH_RETURN_IF_ERROR(check_plaintext(pt));
  const std::size_t level = pt.level();
  const auto rows = key_rows(params_, level, true);
  const std::size_t n = params_.n();
  ring::RnsPoly u = sample_ternary_ntt(params_, rows, prng);
  ring::RnsPoly c0 = sample_error_ntt(params_, rows, prng);
  ring::RnsPoly c1 = sample_error_ntt(params_, rows, prng);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ring::Modulus& q = params_.key_moduli()[rows[i]];
    ring::mul_add_row(pk.pk0().row(rows[i]), u.row(i), c0.row(i), n, q);
    ring::mul_add_row(pk.pk1().row(rows[i]), u.row(i), c1.row(i), n, q);
  }
  secure_zero(u.data().data(), u.data().size() * sizeof(std::uint64_t));
  mod_down_inplace(params_, level, c0);
  mod_down_inplace(params_, level, c1);
  ring::add_inplace(c0, pt.poly(), params_.q_at_level(level));
  return Ciphertext(params_.id(), level, pt.scale(), std::move(c0), std::move(c1));
}

}  // namespace privsearch::ckks
