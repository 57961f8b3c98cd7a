#include "pir/zippir/rns.h"

#include <cmath>
#include <string>

namespace privsearch::pir {
namespace {

// Scalar reference kernels.
// out[l] = sum_w words[w] * table[w * nprimes + l] mod primes[l], reducing every 48 words.
static inline void rns_words_body(const std::uint32_t* words, std::size_t nwords,
                                  const std::uint32_t* table, std::size_t nprimes,
                                  const std::uint32_t* primes, std::uint32_t* out,
                                  std::uint64_t* acc) {
  for (std::size_t l = 0; l < nprimes; ++l) acc[l] = 0;
  for (std::size_t w0 = 0; w0 < nwords; w0 += 48) {
    const std::size_t w1 = w0 + 48 < nwords ? w0 + 48 : nwords;
    for (std::size_t w = w0; w < w1; ++w) {
      const std::uint64_t x = words[w];
      const std::uint32_t* t = table + w * nprimes;
      for (std::size_t l = 0; l < nprimes; ++l) acc[l] += x * t[l];
    }
    for (std::size_t l = 0; l < nprimes; ++l) acc[l] %= primes[l];
  }
  for (std::size_t l = 0; l < nprimes; ++l) out[l] = static_cast<std::uint32_t>(acc[l]);
}

static inline void rns_matvec_body(const std::uint32_t* primes, std::size_t nprimes,
                                   const std::uint32_t* p, std::size_t rows, std::size_t cols,
                                   const std::uint32_t* x, std::uint32_t* out) {
  for (std::size_t l = 0; l < nprimes; ++l) {
    const std::uint32_t* xl = x + l * cols;
    for (std::size_t i = 0; i < rows; ++i) {
      const std::uint32_t* row = p + (l * rows + i) * cols;
      std::uint64_t acc = 0;
      for (std::size_t j = 0; j < cols; ++j) acc += static_cast<std::uint64_t>(row[j]) * xl[j];
      out[l * rows + i] = static_cast<std::uint32_t>(acc % primes[l]);
    }
  }
}

bool use_avx512() {
  static const bool has = detail::rns_avx512_compiled() && __builtin_cpu_supports("avx512f") &&
                          __builtin_cpu_supports("avx512dq");
  return has;
}

bool is_prime_u32(std::uint32_t v) {
  if (v < 2) return false;
  for (std::uint32_t d = 2; static_cast<std::uint64_t>(d) * d <= v; ++d) {
    if (v % d == 0) return false;
  }
  return true;
}

}  // namespace

Result<RnsBasis> RnsBasis::create(std::size_t product_bits, const mpz_class& n) {
  if (product_bits == 0 || product_bits > 60000) {
    return out_of_range_error("RNS `product_bits` = " + std::to_string(product_bits) +
                              " is outside [1, 60000]");
  }
  RnsBasis b;
  b.n_ = n;
  b.m_ = 1;
  mpz_class bound = 1;
  mpz_mul_2exp(bound.get_mpz_t(), bound.get_mpz_t(), product_bits + 2);
  for (std::uint32_t c = (1u << 26) - 1; b.m_ <= bound; c -= 2) {
    if (is_prime_u32(c)) {
      b.primes_.push_back(c);
      b.m_ *= c;
    }
    if (b.primes_.size() > 1000) return internal_error("RNS basis too large");
  }
  if (b.primes_.size() > 1024) return internal_error("RNS basis exceeds 1024 primes");
  const std::size_t L = b.primes_.size();
  // Inputs up to the bit size of N (offsets ck_o are reduced mod N).
  b.input_words_ = (mpz_sizeinbase(n.get_mpz_t(), 2) + 31) / 32;
  b.pow_table_.resize(b.input_words_ * L);
  for (std::size_t l = 0; l < L; ++l) {
    std::uint64_t pw = 1;
    for (std::size_t w = 0; w < b.input_words_; ++w) {
      b.pow_table_[w * L + l] = static_cast<std::uint32_t>(pw);
      pw = (pw << 32) % b.primes_[l];
    }
  }
  b.padded_ = (L + 7) / 8 * 8;
  const std::size_t pieces = 2 * b.input_words_;
  b.pow16_.assign(pieces * b.padded_, 0.0);
  b.prime_f_.assign(b.padded_, 1.0);
  for (std::size_t l = 0; l < L; ++l) {
    std::uint64_t pw = 1;
    b.prime_f_[l] = static_cast<double>(b.primes_[l]);
    for (std::size_t k = 0; k < pieces; ++k) {
      b.pow16_[k * b.padded_ + l] = static_cast<double>(pw);
      pw = (pw << 16) % b.primes_[l];
    }
  }
  b.inv_hat_.resize(L);
  b.inv_prime_.resize(L);
  b.w_mod_n_.resize(L);
  b.hat_.resize(L);
  for (std::size_t l = 0; l < L; ++l) {
    const mpz_class p = b.primes_[l];
    b.hat_[l] = b.m_ / p;
    mpz_class hm = b.hat_[l] % p, inv;
    mpz_invert(inv.get_mpz_t(), hm.get_mpz_t(), p.get_mpz_t());
    b.inv_hat_[l] = static_cast<std::uint32_t>(inv.get_ui());
    b.inv_prime_[l] = 1.0 / static_cast<double>(b.primes_[l]);
    b.w_mod_n_[l] = b.hat_[l] % n;
  }
  b.m_mod_n_ = b.m_ % n;
  return b;
}

void RnsBasis::to_rns(std::span<const std::uint32_t> words, std::uint32_t* out) const {
  PRIVSEARCH_CHECK(words.size() <= input_words_, "to_rns input wider than the basis allows");
  std::vector<std::uint64_t> acc(primes_.size());
  rns_words_body(words.data(), words.size(), pow_table_.data(), primes_.size(), primes_.data(), out,
                 acc.data());
}

void RnsBasis::to_rns_many(std::span<const std::uint32_t> words, std::size_t count,
                           std::uint32_t* out) const {
  PRIVSEARCH_CHECK(words.size() == count * input_words_, "to_rns_many: size mismatch");
  const std::size_t L = primes_.size();
  if (use_avx512()) {
    detail::rns_words_avx512(words.data(), input_words_, count, pow16_.data(), prime_f_.data(), L,
                             padded_, out);
    return;
  }
  std::vector<std::uint32_t> tmp(L);
  for (std::size_t j = 0; j < count; ++j) {
    to_rns(words.subspan(j * input_words_, input_words_), tmp.data());
    for (std::size_t l = 0; l < L; ++l) out[l * count + j] = tmp[l];
  }
}

mpz_class RnsBasis::crt_mod(const std::uint32_t* residues, std::size_t stride) const {
  const std::size_t L = primes_.size();
  mpz_class s = 0;
  long double frac = 0;
  for (std::size_t l = 0; l < L; ++l) {
    const std::uint64_t y =
        static_cast<std::uint64_t>(residues[l * stride]) * inv_hat_[l] % primes_[l];
    frac += static_cast<long double>(y) * inv_prime_[l];
    mpz_addmul_ui(s.get_mpz_t(), w_mod_n_[l].get_mpz_t(), static_cast<unsigned long>(y));
  }
  const unsigned long alpha = static_cast<unsigned long>(std::llround(static_cast<double>(frac)));
  mpz_submul_ui(s.get_mpz_t(), m_mod_n_.get_mpz_t(), alpha);
  mpz_mod(s.get_mpz_t(), s.get_mpz_t(), n_.get_mpz_t());
  return s;
}

mpz_class RnsBasis::crt_exact(const std::uint32_t* residues, std::size_t stride) const {
  mpz_class s = 0;
  for (std::size_t l = 0; l < primes_.size(); ++l) {
    const std::uint64_t y =
        static_cast<std::uint64_t>(residues[l * stride]) * inv_hat_[l] % primes_[l];
    s += hat_[l] * static_cast<unsigned long>(y);
  }
  return mpz_class(s % m_);
}

void rns_matvec_scalar(std::span<const std::uint32_t> primes, const std::uint32_t* p,
                       std::size_t rows, std::size_t cols, const std::uint32_t* x,
                       std::uint32_t* out) {
  rns_matvec_body(primes.data(), primes.size(), p, rows, cols, x, out);
}

void rns_matvec(std::span<const std::uint32_t> primes, const std::uint32_t* p, std::size_t rows,
                std::size_t cols, const std::uint32_t* x, std::uint32_t* out) {
  if (use_avx512()) {
    detail::rns_matvec_avx512(primes, p, rows, cols, x, out);
  } else {
    rns_matvec_scalar(primes, p, rows, cols, x, out);
  }
}

}  // namespace privsearch::pir
