// Paillier and its Damgard-Jurik generalization over GMP (Paillier 1999; Damgard-Jurik 2001).
//
// Public key N = p q with g = N + 1; degree s >= 1 gives plaintexts in Z_{N^s} and ciphertexts
// in Z*_{N^{s+1}} (s = 1 is Paillier). Enc(m; r) = (1 + N)^m * r^{N^s} mod N^{s+1}.
//   add(c1, c2)       = c1 c2            -> m1 + m2
//   scalar_mul(c, k)  = c^k              -> k m
//   add_plain(c, m2)  = c (1 + N)^m2     -> m + m2
// Decryption (s = 1) by CRT: m_p = L_p(c^{p-1} mod p^2) h_p mod p with L_p(x) = (x - 1)/p and
// h_p = (-q)^{-1} mod p (since (1+N)^{p-1} = 1 + (p-1) N mod p^2), likewise for q, then CRT.
// s > 1: c^lambda mod N^{s+1} = (1+N)^{m lambda}, the exponent recovered by Damgard-Jurik's
// digit-by-digit algorithm, then times lambda^{-1} mod N^s.
//
// Security: modulus >= 2048 bits (3072 default, the 128-bit level), smaller only through
// `allow_insecure` for tests. Secret exponents go through mpz_powm_sec; secret big integers live
// in GMP blocks wiped on free (install_wiping_gmp_allocator). PaillierPrivateKey is move-only.
// Every ciphertext that crosses a trust boundary goes through validate_ciphertext
// (0 < c < N^{s+1}, gcd(c, N) = 1).
// The private key and key generation live in paillier_private.h (client library), so the
// provider links no secret-key code.
// Thread safety: keys are immutable after creation and safe to share; Prng is per thread.
#pragma once

#include <gmpxx.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/csprng.h"
#include "core/status.h"

namespace privsearch::pir {

inline constexpr int kPaillierDefaultBits = 3072;
inline constexpr int kPaillierMinSecureBits = 2048;
inline constexpr int kPaillierMaxBits = 8192;
inline constexpr int kPaillierMaxDegree = 8;

namespace detail {
// `bits` within [2048 (or 64 with allow_insecure), 8192].
Status check_paillier_bits(std::size_t bits, bool allow_insecure);
}  // namespace detail

class PaillierPublicKey {
 public:
  // Validates N (odd, `bits` in range, not a perfect square) and s.
  static Result<PaillierPublicKey> create(const mpz_class& n, int degree = 1,
                                          bool allow_insecure = false);

  const mpz_class& n() const { return n_; }
  const mpz_class& plaintext_modulus() const { return ns_; }    // N^s
  const mpz_class& ciphertext_modulus() const { return ns1_; }  // N^{s+1}
  int degree() const { return degree_; }
  std::size_t modulus_bits() const { return bits_; }
  std::size_t n_bytes() const { return (bits_ + 7) / 8; }
  std::size_t plaintext_bytes() const { return (bits_ * degree_ + 7) / 8; }
  std::size_t ciphertext_bytes() const { return (bits_ * (degree_ + 1) + 7) / 8; }

  // m in [0, N^s) (kOutOfRange otherwise).
  Result<mpz_class> encrypt(const mpz_class& m, Prng& prng) const;
  Status validate_ciphertext(const mpz_class& c) const;
  mpz_class add(const mpz_class& c1, const mpz_class& c2) const;
  // k may be any integer (reduced mod N^s; a negative k scales by N^s - |k|).
  mpz_class scalar_mul(const mpz_class& c, const mpz_class& k) const;
  mpz_class add_plain(const mpz_class& c, const mpz_class& m) const;
  // (1 + N)^m mod N^{s+1} by the binomial sum (exact: terms k > s vanish mod N^{s+1}).
  mpz_class one_plus_n_pow(const mpz_class& m) const;

  std::vector<std::uint8_t> ciphertext_to_bytes(const mpz_class& c) const;
  // Fixed width, validated.
  Result<mpz_class> ciphertext_from_bytes(std::span<const std::uint8_t> bytes) const;

  // "PSPK" v1: degree u8, bits u16, N little-endian fixed width.
  std::vector<std::uint8_t> serialize() const;
  static Result<PaillierPublicKey> deserialize(std::span<const std::uint8_t> bytes,
                                               bool allow_insecure = false);

 private:
  PaillierPublicKey() = default;
  mpz_class n_, ns_, ns1_;
  int degree_ = 1;
  std::size_t bits_ = 0;
  std::vector<mpz_class> inv_factorial_;  // (k!)^{-1} mod N^{s+1}, k <= s
};

}  // namespace privsearch::pir
