// LWE-ciphertext compression with an additive scheme (ZipPIR, arXiv 2603.09190, section 3 and
// appendix A): the server evaluates the linear LWE phase under Paillier encryption of the secret.
//
// LWE here: q = 2^log_q (log_q <= 64), plaintext modulus p = 2^log_p, Delta = q / p,
// b = <a, s> + e + Delta mu (mod q); the phase mu* = b + sum_i (q - a_i) s_i = b - <a, s> mod q.
//
//   single       c = AEnc(b) (+) sum_i (q - a_i) (x) ck_i,  ck_i = AEnc(s_i)            (Alg. 2)
//                decrypt: mu* = ADec(c) mod q, mu = round(mu* / Delta) mod p. Needs the
//                plaintext space m > q + n q^2 (uniform s) or q + n q (binary s).
//   packed key   pck = AEnc(sum_{i<t} s_i delta^i) with delta > gamma; the server unpacks
//                ck_i = delta^{t-1-i} (x) pck, and the phase sits at delta^{t-1}: lower cross
//                terms stay below delta^{t-1} (each power's coefficient < gamma < delta), upper
//                ones vanish mod delta^t, so mu* = floor(X / delta^{t-1}) mod delta mod q exactly.
//                The constant b is encrypted at delta^{t-1}. Needs delta^{2t-1} < m.
//   batched      l ciphertexts in one: c = AEnc(sum_j b_j gamma^j) (+) sum_i E_i (x) ck_i with
//                E_i = sum_j (q - a_ji) gamma^j (one multi-exponentiation, "scale first").
//                gamma = q + n q^2 / q + n q (exact slots), or the smaller scales q^2 / q (binary)
//                where slots overlap: slot j reads its value plus a carry <= n + 1 from below,
//                which needs |e| + n + 1 < Delta / 2 (the paper's |e| < Delta/4 condition).
//   rescaled     switch (a, b) from q to q' = 2^r first (round(x q' / q)); the noise grows by at
//                most (1 + ||s||_1) / 2, the exponents shrink to r bits.
//   RLWE coeff.  coefficient k of c0 + c1 s in Z_q[X]/(X^N + 1) is the LWE ciphertext
//                b = c0[k], a_i = -c1[k - i] (i <= k), +c1[N + k - i] (i > k).
// Thread safety: pure functions.
#pragma once

#include <gmpxx.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/csprng.h"
#include "core/status.h"
#include "pir/paillier/paillier_private.h"

namespace privsearch::pir {

struct LweScheme {
  std::size_t n = 0;
  int log_q = 32;
  int log_p = 8;
  bool binary = true;  // binary secret (else uniform mod q)

  std::uint64_t q_mask() const {
    return log_q == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << log_q) - 1;
  }
  Status validate() const;
};

struct LweCiphertext {
  std::vector<std::uint64_t> a;
  std::uint64_t b = 0;
};

// Plain LWE, the object being compressed (reference implementation for tests and benchmarks).
std::vector<std::uint64_t> lwe_keygen(const LweScheme& scheme, Prng& prng);
LweCiphertext lwe_encrypt(const LweScheme& scheme, std::span<const std::uint64_t> sk,
                          std::uint64_t mu, double sigma, Prng& prng);
std::uint64_t lwe_decrypt(const LweScheme& scheme, std::span<const std::uint64_t> sk,
                          const LweCiphertext& ct);

enum class CompressionScale { kExact, kOverlap };
// gamma: q + n q^2 / q + n q (exact) or q^2 / q (overlap), by secret kind.
mpz_class compression_scale(const LweScheme& scheme, CompressionScale scale);
// LWE ciphertexts per additive plaintext for a plaintext space of `plaintext_bits` bits.
std::size_t ciphertexts_per_plaintext(const LweScheme& scheme, CompressionScale scale,
                                      std::size_t plaintext_bits);

// ck_i = AEnc(s_i).
std::vector<mpz_class> make_compression_key(const PaillierPublicKey& pk,
                                            std::span<const std::uint64_t> sk, Prng& prng);

Result<mpz_class> compress_single(const PaillierPublicKey& pk, std::span<const mpz_class> ck,
                                  const LweScheme& scheme, const LweCiphertext& ct,
                                  const mpz_class& b_scale = 1);
std::uint64_t decrypt_compressed_single(const PaillierPrivateKey& sk, const mpz_class& c,
                                        const LweScheme& scheme);

// Packed keys: digits per packed ciphertext and delta for the scheme.
struct PackedKeyLayout {
  mpz_class delta;
  std::size_t digits_per_ciphertext = 0;
  std::size_t ciphertexts = 0;
};
PackedKeyLayout packed_key_layout(const LweScheme& scheme, const PaillierPublicKey& pk);
std::vector<mpz_class> make_packed_compression_key(const PaillierPublicKey& pk,
                                                   std::span<const std::uint64_t> sk,
                                                   const PackedKeyLayout& layout, Prng& prng);
// Server side: ck_i = delta^{t-1-(i mod t)} (x) pck_{i / t}.
std::vector<mpz_class> unpack_compression_key(const PaillierPublicKey& pk,
                                              std::span<const mpz_class> packed,
                                              const PackedKeyLayout& layout, std::size_t n);
std::uint64_t decrypt_compressed_packed(const PaillierPrivateKey& sk, const mpz_class& c,
                                        const LweScheme& scheme, const PackedKeyLayout& layout);

// Batched: all `cts` into one additive ciphertext (count <= ciphertexts_per_plaintext).
Result<mpz_class> compress_batch(const PaillierPublicKey& pk, std::span<const mpz_class> ck,
                                 const LweScheme& scheme, std::span<const LweCiphertext> cts,
                                 CompressionScale scale, bool use_ifma = true);
std::vector<std::uint64_t> decrypt_compressed_batch(const PaillierPrivateKey& sk,
                                                    const mpz_class& c, const LweScheme& scheme,
                                                    std::size_t count, CompressionScale scale);

// Modulus switch to 2^new_log_q.
LweCiphertext rescale_lwe(const LweScheme& scheme, const LweCiphertext& ct, int new_log_q);

// Coefficient k of an RLWE ciphertext (c0, c1) over Z_q[X]/(X^N + 1) as an LWE ciphertext
// under the coefficient vector of s.
LweCiphertext lwe_from_rlwe_coefficient(std::span<const std::uint64_t> c0,
                                        std::span<const std::uint64_t> c1, std::size_t k,
                                        std::uint64_t q_mask);

}  // namespace privsearch::pir
