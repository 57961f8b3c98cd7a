// CKKS parameters: an unchecked ParamsLiteral becomes an immutable, checked Params through
// Params::create(), the only way to get one.
//
// Notation (used across ckks/): n ring degree, slots = n/2, q[i] data primes q_0..q_L (q_0 is
// the base prime kept to the end; rescaling drops q_L, then q_{L-1}, ...), p[j] the special
// key-switching primes, level l = index of the last data prime a ciphertext still has (l+1
// primes), delta the scale. Key material lives modulo Q_L * P ("the key basis" qp: q then p).
//
// create() checks (STYLE.md "Parameters"): n a power of two in bounds; every prime prime,
// distinct, 1 mod 2n, at most 61 bits; log2(Q*P) within the HomomorphicEncryption.org 128-bit
// table for ternary secrets (n = 1024: 27, 2048: 54, 4096: 109, 8192: 218, 16384: 438,
// 32768: 881 bits) unless the literal is marked insecure; log2(delta) below the bits of q_0 and
// at most the bits of every rescaling prime; at least one data and one special prime; the
// special modulus at least as large as every data prime (hybrid key-switching noise).
// The params id is SHA-256 over a canonical encoding of everything that affects ciphertexts;
// every key, plaintext and ciphertext carries it.
// Thread safety: Params is an immutable handle; copies share the precomputed tables.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "ring/modulus.h"
#include "ring/ntt.h"
#include "ring/rns.h"

namespace privsearch::ckks {

using ParamsId = std::array<std::uint8_t, 32>;

enum class SecretDistribution : std::uint8_t { kTernary = 1 };
enum class ErrorDistribution : std::uint8_t { kCbd21 = 1 };  // centred binomial, sigma 3.24

struct ParamsLiteral {
  std::string name;              // informational; not part of the params id
  std::size_t n = 0;             // ring degree
  std::vector<int> q_bits;       // data prime sizes, q_0 first (ignored if q is given)
  std::vector<int> p_bits;       // special prime sizes (ignored if p is given)
  std::vector<std::uint64_t> q;  // explicit data primes
  std::vector<std::uint64_t> p;  // explicit special primes
  int log_scale = 0;             // default scale delta = 2^log_scale
  // Key-switching digits: the data primes are split into `dnum` groups of consecutive primes
  // (sizes differ by at most one, larger groups first); 0 means one digit per data prime.
  // Fewer digits mean smaller, faster keys but need P at least as large as every group.
  std::size_t dnum = 0;
  SecretDistribution secret = SecretDistribution::kTernary;
  ErrorDistribution error = ErrorDistribution::kCbd21;
  // Skips the security table and allows small n. Only for tests; named presets say "insecure".
  bool insecure_for_tests = false;
};

// The largest log2(Q*P) with 128-bit classical security for a uniform ternary secret
// (HomomorphicEncryption.org standard, Albrecht et al. 2018, Table 1), or 0 if n is not listed.
int he_standard_max_log_qp(std::size_t n);

class Params {
 public:
  static Result<Params> create(const ParamsLiteral& literal);

  const std::string& name() const { return d_->name; }
  std::size_t n() const { return d_->n; }
  std::size_t slots() const { return d_->n / 2; }
  int log_n() const { return d_->log_n; }
  std::size_t max_level() const { return d_->num_q - 1; }
  std::size_t num_q() const { return d_->num_q; }
  std::size_t num_p() const { return d_->key_moduli.size() - d_->num_q; }
  double default_scale() const { return d_->default_scale; }
  int log_scale() const { return d_->log_scale; }
  double log_qp() const { return d_->log_qp; }
  bool insecure() const { return d_->insecure; }
  SecretDistribution secret_distribution() const { return d_->secret; }
  ErrorDistribution error_distribution() const { return d_->error; }
  const ParamsId& id() const { return d_->id; }

  // The key basis q_0..q_L, p_0..p_{k-1} and its NTT tables.
  std::span<const ring::Modulus> key_moduli() const { return d_->key_moduli; }
  std::span<const ring::Modulus> q_moduli() const {
    return std::span<const ring::Modulus>(d_->key_moduli).first(d_->num_q);
  }
  std::span<const ring::Modulus> p_moduli() const {
    return std::span<const ring::Modulus>(d_->key_moduli).subspan(d_->num_q);
  }
  // q_0..q_level.
  std::span<const ring::Modulus> q_at_level(std::size_t level) const {
    return q_moduli().first(level + 1);
  }
  // log2 Q_level = sum of log2 q_i over q_0..q_level.
  double log_q_at_level(std::size_t level) const {
    double bits = 0;
    for (const auto& q : q_at_level(level)) bits += std::log2(static_cast<double>(q.value()));
    return bits;
  }
  const ring::NttTables& ntt(std::size_t key_index) const { return d_->ntt[key_index]; }
  // Key-switching digits: digit j covers data primes [digit_first(j), digit_first(j) +
  // digit_size(j)); at level l only digits with digit_first(j) <= l take part, truncated to
  // the primes <= l.
  std::size_t num_digits() const { return d_->digit_first.size(); }
  std::size_t digit_first(std::size_t j) const { return d_->digit_first[j]; }
  std::size_t digit_size(std::size_t j) const { return d_->digit_size[j]; }
  std::size_t digit_of_prime(std::size_t i) const { return d_->digit_of_prime[i]; }
  // Exact centred conversion from the first `count` primes of digit j to every key modulus.
  const ring::BaseConverter& digit_converter(std::size_t j, std::size_t count) const {
    return d_->digit_converters[j][count - 1];
  }
  // RNS base q_0..q_level (for decoding).
  const ring::RnsBase& q_base(std::size_t level) const { return d_->q_bases[level]; }
  // Base P of the special primes and the converter P -> q_0..q_L (ModDown).
  const ring::BaseConverter& p_to_q() const { return *d_->p_to_q; }
  // [P^-1]_{q_i} and [P]_{q_i}.
  std::uint64_t p_inv_mod_q(std::size_t i) const { return d_->p_inv_mod_q[i]; }
  std::uint64_t p_mod_q(std::size_t i) const { return d_->p_mod_q[i]; }
  // [(P-1)/2]_{q_i}: the half-P offset that makes ModDown round to nearest.
  std::uint64_t p_half_mod_q(std::size_t i) const { return d_->p_half_mod_q[i]; }
  // [q_l^-1]_{q_i} for i < l (rescaling by q_l).
  std::uint64_t q_inv_mod_q(std::size_t l, std::size_t i) const {
    return d_->q_inv_mod_q[l * d_->num_q + i];
  }

  bool operator==(const Params& o) const { return d_->id == o.d_->id; }

 private:
  struct Data {
    std::string name;
    std::size_t n = 0;
    int log_n = 0;
    std::size_t num_q = 0;
    std::vector<ring::Modulus> key_moduli;
    std::vector<ring::NttTables> ntt;
    std::vector<ring::RnsBase> q_bases;
    std::optional<ring::BaseConverter> p_to_q;
    std::vector<std::size_t> digit_first, digit_size, digit_of_prime;
    std::vector<std::vector<ring::BaseConverter>> digit_converters;
    std::vector<std::uint64_t> p_inv_mod_q, p_mod_q, p_half_mod_q, q_inv_mod_q;
    int log_scale = 0;
    double default_scale = 0;
    double log_qp = 0;
    bool insecure = false;
    SecretDistribution secret = SecretDistribution::kTernary;
    ErrorDistribution error = ErrorDistribution::kCbd21;
    ParamsId id{};
  };
  explicit Params(std::shared_ptr<const Data> d) : d_(std::move(d)) {}
  static Status build_tables(Data& d, const std::vector<std::uint64_t>& q,
                             const std::vector<std::uint64_t>& p);
  std::shared_ptr<const Data> d_;
};

std::string params_id_hex(const ParamsId& id);

// A named check shared by every ckks operation: kFailedPrecondition naming `what` if the ids
// differ.
Status check_params_id(const Params& params, const ParamsId& id, const char* what);

}  // namespace privsearch::ckks
