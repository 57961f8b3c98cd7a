// Residue number system for ZipPIR's online product t = P ck_o mod N (ZipPIR section 4.3:
// "240 prime moduli of 27-bit length", so no big-integer arithmetic until the end).
//
// Primes are below 2^26, so a product of two residues is below 2^52 and up to 4096 of them add
// in a uint64 without reduction (n = 1400 terms per output here). The basis covers
// `product_bits` + 2 bits, so an exact non-negative result V < 2^product_bits has V / M < 1/4 and
// CRT needs no sign handling: V = sum_l y_l (M / p_l) - alpha M with y_l = v_l (M/p_l)^{-1} mod
// p_l and alpha = round(sum_l y_l / p_l) (the fraction V / M is tiny, so rounding a double sum
// of 240 terms is exact). V mod N is then sum_l y_l W_l - alpha (M mod N) with W_l = (M/p_l)
// mod N precomputed.
// Big integers enter as little-endian 32-bit words, split into 16-bit pieces; piece w contributes
// piece * (2^(16w) mod p_l) from a precomputed table. Each term is below 2^42 and 192 of them
// (3072 bits) stay below 2^50, so the AVX-512 kernel accumulates in doubles with FMA exactly
// (integers below 2^53) and reduces once: q = floor(x / p), r = x - q p, one correction.
// Thread safety: immutable after create(); methods are reentrant.
#pragma once

#include <gmpxx.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"

namespace privsearch::pir {

class RnsBasis {
 public:
  // Primes below 2^26 (largest first) until their product exceeds 2^(product_bits + 2); the
  // reduction target N for crt_mod().
  static Result<RnsBasis> create(std::size_t product_bits, const mpz_class& n);

  std::size_t size() const { return primes_.size(); }
  std::span<const std::uint32_t> primes() const { return primes_; }
  std::size_t input_words() const { return input_words_; }

  // Residues of a non-negative integer of at most input_words() 32-bit words:
  // out[l] = x mod p_l.
  void to_rns(std::span<const std::uint32_t> words, std::uint32_t* out) const;
  // Residues of many integers (count x input_words() words, row-major) into a limb-major
  // table out[l * count + j].
  void to_rns_many(std::span<const std::uint32_t> words, std::size_t count,
                   std::uint32_t* out) const;
  // V mod N from residues (V < 2^product_bits).
  mpz_class crt_mod(const std::uint32_t* residues, std::size_t stride) const;
  // Reference: exact V from residues (for tests).
  mpz_class crt_exact(const std::uint32_t* residues, std::size_t stride) const;

 private:
  RnsBasis() = default;
  std::vector<std::uint32_t> primes_;
  std::vector<std::uint32_t> pow_table_;  // [w][l] = 2^(32 w) mod p_l
  std::vector<double> pow16_;             // [w16][l padded to 8] = 2^(16 w16) mod p_l
  std::vector<double> prime_f_;           // p_l, padded with 1
  std::size_t padded_ = 0;
  std::vector<std::uint32_t> inv_hat_;  // (M/p_l)^{-1} mod p_l
  std::vector<double> inv_prime_;
  std::vector<mpz_class> w_mod_n_;  // (M/p_l) mod N
  std::vector<mpz_class> hat_;      // M/p_l (reference CRT)
  mpz_class m_, m_mod_n_, n_;
  std::size_t input_words_ = 0;
};

// acc[l * rows + i] = sum_j p[(l * rows + i) * cols + j] * x[l * cols + j] mod primes[l]:
// the RNS matrix-vector product, one prime after another.
void rns_matvec(std::span<const std::uint32_t> primes, const std::uint32_t* p, std::size_t rows,
                std::size_t cols, const std::uint32_t* x, std::uint32_t* out);
void rns_matvec_scalar(std::span<const std::uint32_t> primes, const std::uint32_t* p,
                       std::size_t rows, std::size_t cols, const std::uint32_t* x,
                       std::uint32_t* out);

namespace detail {
bool rns_avx512_compiled();
void rns_matvec_avx512(std::span<const std::uint32_t> primes, const std::uint32_t* p,
                       std::size_t rows, std::size_t cols, const std::uint32_t* x,
                       std::uint32_t* out);
// Residues of `count` inputs of `nwords` words each (row-major) into out[l * count + j], via the
// 16-bit-piece double table (pieces = 2 nwords, padded primes).
void rns_words_avx512(const std::uint32_t* words, std::size_t nwords, std::size_t count,
                      const double* pow16, const double* primes_f, std::size_t nprimes,
                      std::size_t padded, std::uint32_t* out);
}  // namespace detail

}  // namespace privsearch::pir
