// A CKKS fixture: params, encoder, keys, encryptor, decryptor and evaluator from a named seed.
#pragma once

#include <gtest/gtest.h>

#include "ckks/client/decryptor.h"
#include "ckks/client/encryptor.h"
#include "ckks/client/keygen.h"
#include "ckks/encoder.h"
#include "ckks/evaluator.h"
#include "testing/test_util.h"

namespace privsearch::testing {

struct CkksKit {
  explicit CkksKit(const ckks::Params& p, std::uint64_t seed_label = 100)
      : params(p),
        prng(test_prng(seed_label)),
        encoder(*ckks::Encoder::create(p)),
        keygen(p),
        sk(keygen.create_secret_key(prng)),
        pk(*keygen.create_public_key(sk, prng)),
        encryptor(p),
        decryptor(p),
        evaluator(p) {}

  ckks::Ciphertext encrypt(const std::vector<double>& v, std::size_t level, bool symmetric = true) {
    const auto pt = *encoder.encode(v, level, params.default_scale());
    return symmetric ? *encryptor.encrypt_symmetric(sk, pt, prng)
                     : *encryptor.encrypt_public(pk, pt, prng);
  }
  std::vector<double> decrypt(const ckks::Ciphertext& ct) {
    return *encoder.decode(*decryptor.decrypt(sk, ct));
  }

  ckks::Params params;
  Prng prng;
  ckks::Encoder encoder;
  ckks::KeyGenerator keygen;
  ckks::SecretKey sk;
  ckks::PublicKey pk;
  ckks::Encryptor encryptor;
  ckks::Decryptor decryptor;
  ckks::Evaluator evaluator;
};

}  // namespace privsearch::testing
