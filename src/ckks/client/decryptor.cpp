#include "ckks/client/decryptor.h"

#include "ckks/evaluator.h"
#include "core/linkage.h"

namespace privsearch::ckks {

Result<Plaintext> Decryptor::decrypt(const SecretKey& sk, const Ciphertext& ct) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params_, sk.params_id(), "secret key"));
  PRIVSEARCH_RETURN_IF_ERROR(Evaluator(params_).check_ciphertext(ct, "ciphertext"));
  ring::RnsPoly m = ct.c0();
  const std::size_t n = params_.n();
  for (std::size_t i = 0; i <= ct.level(); ++i) {
    ring::mul_add_row(ct.c1().row(i), sk.row(i), m.row(i), n, params_.key_moduli()[i]);
  }
  return Plaintext(params_.id(), ct.level(), ct.scale(), std::move(m));
}

}  // namespace privsearch::ckks

// Marks this binary as containing decryption (core/linkage.h).
extern "C" void privsearch_linked_ckks_decryptor() {}
