// Decryption of compact result ciphertexts (client library; see ckks/compact.h):
//   m = c0'' * 2^(k - b0) + c1'' * 2^(k - b1) * s  (mod 2^k),
// decoded at the compact scale. The product c1'' * s is computed exactly over the integers
// (|coefficients| < n * 2^62 < 2^76) by NTT modulo a single key-basis prime when one exceeds
// n * 2^(b1 + 1), else modulo two primes of the key basis (q_0 and the
// first special prime, product >= 2^98) and a two-prime CRT, then reduced modulo 2^k.
// Thread safety: stateless. Constant time: branch-free per coefficient.
#pragma once

#include <vector>

#include "ckks/client/secret_key.h"
#include "ckks/compact.h"
#include "ckks/encoder.h"
#include "ckks/params.h"
#include "core/status.h"

namespace privsearch::ckks {

class CompactDecryptor {
 public:
  explicit CompactDecryptor(Params params) : params_(std::move(params)) {}
  // The n integer coefficients of m, centred in [-2^(k-1), 2^(k-1)).
  Result<std::vector<double>> decrypt_coefficients(const SecretKey& sk,
                                                   const CompactCiphertext& ct) const;
  // Real parts of all slots.
  Result<std::vector<double>> decrypt_decode(const SecretKey& sk, const Encoder& encoder,
                                             const CompactCiphertext& ct) const;

 private:
  Params params_;
};

}  // namespace privsearch::ckks
