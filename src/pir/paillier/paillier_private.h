// Paillier / Damgard-Jurik private key, decryption and key generation (client library; see
// paillier.h for the scheme). PaillierPrivateKey is move-only; its big integers live in GMP
// blocks wiped on free.
// Thread safety: an immutable key may be shared; decryption is reentrant.
#pragma once

#include "pir/paillier/paillier.h"

namespace privsearch::pir {

class PaillierPrivateKey {
 public:
  PaillierPrivateKey(PaillierPrivateKey&&) noexcept = default;
  PaillierPrivateKey& operator=(PaillierPrivateKey&&) noexcept = default;
  PaillierPrivateKey(const PaillierPrivateKey&) = delete;
  PaillierPrivateKey& operator=(const PaillierPrivateKey&) = delete;
  ~PaillierPrivateKey();

  // Rebuilds the key from its primes (checks p q = N of `pub`).
  static Result<PaillierPrivateKey> from_primes(const PaillierPublicKey& pub, const mpz_class& p,
                                                const mpz_class& q);

  const PaillierPublicKey& public_key() const { return pub_; }
  // Validates c, then decrypts to [0, N^s).
  Result<mpz_class> decrypt(const mpz_class& c) const;
  // Decryption without validation, for ciphertexts the caller generated or validated.
  mpz_class decrypt_unchecked(const mpz_class& c) const;
  // Decrypts the centred representative in (-N^s/2, N^s/2].
  Result<mpz_class> decrypt_signed(const mpz_class& c) const;

  // "PSSK" v1: the public key, then p and q. SECRET bytes: store them like a private key file.
  std::vector<std::uint8_t> serialize() const;
  static Result<PaillierPrivateKey> deserialize(std::span<const std::uint8_t> bytes,
                                                bool allow_insecure = false);

 private:
  explicit PaillierPrivateKey(PaillierPublicKey pub) : pub_(std::move(pub)) {}
  mpz_class decrypt_crt(const mpz_class& c) const;
  mpz_class decrypt_dj(const mpz_class& c) const;
  void wipe();

  PaillierPublicKey pub_;
  mpz_class p_, q_, p2_, q2_, hp_, hq_, p_inv_q_;  // CRT material (s = 1)
  mpz_class lambda_, lambda_inv_;                  // lcm(p-1, q-1) and its inverse mod N^s
};

struct PaillierKeyPair {
  PaillierPublicKey public_key;
  PaillierPrivateKey private_key;
};

// Two random primes of bits/2 bits each (top two bits set so N has exactly `bits` bits).
Result<PaillierKeyPair> paillier_keygen(int bits, Prng& prng, int degree = 1,
                                        bool allow_insecure = false);

}  // namespace privsearch::pir
