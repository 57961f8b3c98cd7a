// Key generation (client library): secret key s uniform ternary; public key
// (pk0, pk1) = (-a*s + e, a) modulo Q_L * P with a expanded from a fresh seed.
// Thread safety: stateless apart from the Prng the caller passes (one per thread).
#pragma once

#include <span>

#include "ckks/client/secret_key.h"
#include "ckks/galois_keys.h"
#include "ckks/params.h"
#include "ckks/public_key.h"
#include "core/csprng.h"
#include "core/status.h"

namespace privsearch::ckks {

class KeyGenerator {
 public:
  explicit KeyGenerator(Params params) : params_(std::move(params)) {}
  SecretKey create_secret_key(Prng& prng) const;
  Result<PublicKey> create_public_key(const SecretKey& sk, Prng& prng) const;
  // Galois keys for exactly the given left-rotation steps (normalized modulo slots; duplicates
  // merged; 0 is kInvalidArgument) and, if asked, conjugation. Each key is seeded.
  Result<GaloisKeys> create_galois_keys(const SecretKey& sk, std::span<const int> steps,
                                        bool conjugate, Prng& prng) const;
  // One key switching sigma_g(s) -> s (see galois_keys.h).
  KeySwitchKey create_galois_key(const SecretKey& sk, std::uint64_t galois_elt, Prng& prng) const;

 private:
  Params params_;
};

}  // namespace privsearch::ckks
