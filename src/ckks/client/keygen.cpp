#include "ckks/client/keygen.h"

#include <fmt/format.h>

#include <algorithm>

#include "ckks/client/noise.h"
#include "ckks/internal/poly_util.h"
#include "core/linkage.h"
#include "ring/automorphism.h"

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

KeySwitchKey KeyGenerator::create_galois_key(const SecretKey& sk, std::uint64_t galois_elt,
                                             Prng& prng) const {
  const auto rows = key_rows(params_, params_.max_level(), true);
  const std::size_t n = params_.n();
  const auto perm = ring::GaloisPermutation::create(galois_elt, n).value();
  Seed seed{};
  prng.fill(seed);
  std::vector<ring::RnsPoly> a = expand_key_switch_uniform(params_, seed);
  std::vector<ring::RnsPoly> b;
  b.reserve(params_.num_digits());
  SecureVector<std::uint64_t> s_rot(n);
  for (std::size_t j = 0; j < params_.num_digits(); ++j) {
    ring::RnsPoly bj = sample_error_ntt(params_, rows, prng);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const ring::Modulus& m = params_.key_moduli()[rows[r]];
      std::uint64_t* out = bj.row(r);
      const std::uint64_t* ar = a[j].row(r);
      const std::uint64_t* sr = sk.row(rows[r]);
      for (std::size_t t = 0; t < n; ++t) out[t] = m.sub(out[t], m.mul(ar[t], sr[t]));
    }
    // Gadget term on the rows of digit j: + [P]_{q_i} * sigma_g(s).
    for (std::size_t i = params_.digit_first(j); i < params_.digit_first(j) + params_.digit_size(j);
         ++i) {
      const ring::Modulus& qi = params_.key_moduli()[i];
      perm.apply(sk.row(i), s_rot.data());
      const std::uint64_t pm = params_.p_mod_q(i), pms = qi.shoup(pm);
      std::uint64_t* out = bj.row(i);
      for (std::size_t t = 0; t < n; ++t) out[t] = qi.add(out[t], qi.mul_shoup(s_rot[t], pm, pms));
    }
    b.push_back(std::move(bj));
  }
  return KeySwitchKey(params_, std::move(b), std::move(a), seed);
}

Result<GaloisKeys> KeyGenerator::create_galois_keys(const SecretKey& sk, std::span<const int> steps,
                                                    bool conjugate, Prng& prng) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params_, sk.params_id(), "secret key"));
  std::vector<int> normalized;
  for (int step : steps) {
    const int k = normalize_step(step, params_.slots());
    if (k == 0) {
      return invalid_argument_error(
          fmt::format("rotation step {} is a multiple of the {} slots and needs no key", step,
                      params_.slots()));
    }
    normalized.push_back(k);
  }
  std::sort(normalized.begin(), normalized.end());
  normalized.erase(std::unique(normalized.begin(), normalized.end()), normalized.end());
  std::map<std::uint64_t, KeySwitchKey> keys;
  for (int k : normalized) {
    const std::uint64_t g = ring::galois_elt_for_step(k, params_.n());
    keys.emplace(g, create_galois_key(sk, g, prng));
  }
  if (conjugate) {
    const std::uint64_t g = ring::galois_elt_conjugate(params_.n());
    keys.emplace(g, create_galois_key(sk, g, prng));
  }
  return GaloisKeys(params_.id(), std::move(normalized), conjugate, std::move(keys));
}

}  // namespace privsearch::ckks

// Marks this binary as containing key generation (core/linkage.h).
extern "C" void privsearch_linked_ckks_keygen() {}
