// Decryption (client library): pt = c0 + c1*s mod Q_l, NTT form, same level and scale.
// Thread safety: stateless. Constant time: straight-line arithmetic.
#pragma once

#include "ckks/ciphertext.h"
#include "ckks/client/secret_key.h"
#include "ckks/params.h"
#include "ckks/plaintext.h"
#include "core/status.h"

namespace privsearch::ckks {

class Decryptor {
 public:
  explicit Decryptor(Params params) : params_(std::move(params)) {}
  Result<Plaintext> decrypt(const SecretKey& sk, const Ciphertext& ct) const;

 private:
  Params params_;
};

}  // namespace privsearch::ckks
