// Encryption (client library).
//
// Symmetric, seeded: c1 = a expanded from a fresh 32-byte seed, c0 = -a*s + e + pt (mod Q_l).
// The ciphertext keeps the seed so it serializes at about half size.
// Public key: over Q_l * P, (c0', c1') = (pk0*u + e0, pk1*u + e1) with ternary u, then
// ModDown by P divides the noise u*e + e0 + e1*s by P (SEAL does the same), and c0 += pt.
// Fresh noise is then a few units instead of about sqrt(n)*sigma*|u|.
// Thread safety: stateless apart from the caller's Prng.
#pragma once

#include "ckks/ciphertext.h"
#include "ckks/client/secret_key.h"
#include "ckks/params.h"
#include "ckks/plaintext.h"
#include "ckks/public_key.h"
#include "core/csprng.h"
#include "core/status.h"

namespace privsearch::ckks {

class Encryptor {
 public:
  explicit Encryptor(Params params) : params_(std::move(params)) {}
  Result<Ciphertext> encrypt_symmetric(const SecretKey& sk, const Plaintext& pt, Prng& prng) const;
  Result<Ciphertext> encrypt_public(const PublicKey& pk, const Plaintext& pt, Prng& prng) const;

 private:
  Status check_plaintext(const Plaintext& pt) const;
  Params params_;
};

}  // namespace privsearch::ckks
