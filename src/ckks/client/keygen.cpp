#include "ckks/client/keygen.h"

#include "ckks/client/noise.h"
#include "ckks/poly_util.h"

namespace privsearch::ckks {

SecretKey KeyGenerator::create_secret_key(Prng& prng) const {
  const auto rows = key_rows(params_, params_.max_level(), true);
  ring::RnsPoly s = sample_ternary_ntt(params_, rows, prng);
  SecureVector<std::uint64_t> data(s.data().size());
  std::copy(s.data().begin(), s.data().end(), data.data());
  secure_zero(s.data().data(), s.data().size() * sizeof(std::uint64_t));
  return SecretKey(params_.id(), params_.n(), rows.size(), std::move(data));
}

Result<PublicKey> KeyGenerator::create_public_key(const SecretKey& sk, Prng& prng) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params_, sk.params_id(), "secret key"));
  const auto rows = key_rows(params_, params_.max_level(), true);
  Seed seed{};
  prng.fill(seed);
  ring::RnsPoly a = expand_uniform(params_, rows, seed, 0);
  ring::RnsPoly pk0 = sample_error_ntt(params_, rows, prng);
  const std::size_t n = params_.n();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ring::Modulus& q = params_.key_moduli()[rows[i]];
    std::uint64_t* out = pk0.row(i);
    const std::uint64_t* ai = a.row(i);
    const std::uint64_t* si = sk.row(rows[i]);
    for (std::size_t k = 0; k < n; ++k) out[k] = q.sub(out[k], q.mul(ai[k], si[k]));
  }
  return PublicKey(params_.id(), std::move(pk0), std::move(a), seed);
}

}  // namespace privsearch::ckks
