// Key generation (client library): secret key s uniform ternary; public key
// (pk0, pk1) = (-a*s + e, a) modulo Q_L * P with a expanded from a fresh seed.
// Thread safety: stateless apart from the Prng the caller passes (one per thread).
#pragma once

#include "ckks/client/secret_key.h"
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

 private:
  Params params_;
};

}  // namespace privsearch::ckks
