// Linearly homomorphic LWE over q = 2^64 for private scoring (the shape of Tiptoe's ranking,
// Henzinger et al., SOSP 2023): the client encrypts an integer vector u, the provider multiplies
// a public byte matrix D by the ciphertext, the client decrypts D u exactly.
//
//   query   v = A s + e + Delta u          in Z_q^{cols}, q = 2^64, Delta = q / p, p = 2^log_p
//   answer  D v = H s + D e + Delta D u     (H = D A, the hint, public and query-independent)
//   decode  D u mod p = round((D v - H s) / Delta)
//
// Why q = 2^64: the scores D u are inner products of whole quantized vectors (|D u| up to
// ~2^18), and the noise D e sums over every column of the matrix (all clusters' blocks), far
// beyond what q = 2^32 leaves room for.
// Parameters: n = 2048, ternary secret, rounded Gaussian error sigma = 81,920. The HE-standard
// 128-bit table (Albrecht et al. 2018, classical, n = 2048) allows log q = 54 at sigma = 3.2,
// i.e. q / sigma = 2^52.3; here q / sigma = 2^64 / 81,920 = 2^47.7, a larger relative error at
// the same n, so at least as hard for the attacks the table is built from (which depend on n and
// q / sigma).
// Modulus switching: the provider sends only the rounded high 32 bits of each answer entry and
// the hint is kept as the rounded high 32 bits of H. Decoding then works mod 2^32 with
// Delta' = 2^(32 - log_p) and a deterministic error below n/2 + 1 (hint and answer rounding,
// |s_j| <= 1) plus the Gaussian D e / 2^32, negligible (lwe64_decoding_failure_log2).
// Query modulus switching: the client may send each entry rounded to its high 64 - b bits
// (b = `drop_bits`, 0, 8 or 16); the provider multiplies those (6 byte digits instead of 8 at
// b = 16) and shifts back. The extra deterministic error is |D delta| <= max_entry cols 2^(b-1),
// counted in the failure bound.
// Answer switching: the provider may round each 32-bit answer further to its high w bits
// (lwe64_switch_answer); the client shifts it back. Extra deterministic error 2^(31 - w) in
// units of 2^32, against the threshold 2^(31 - log_p): w = log_p + 1 leaves half the margin.
// A (cols x n) comes in chunks of 4096 rows, chunk k from Prng stream kLwe64MatrixStream + k of
// the public seed.
// Thread safety: free functions are pure; Lwe64Secret and Lwe64Mask are move-only and wiped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/csprng.h"
#include "core/secure_buffer.h"
#include "core/status.h"

namespace privsearch::pir {

struct Lwe64Params {
  std::string_view name;
  std::uint32_t n = 0;
  double sigma = 0;
  bool secure = true;
  std::string_view provenance;
};

inline constexpr std::uint64_t kLwe64MatrixStream = 0x4c57453634000000ull;  // "LWE64"
inline constexpr std::size_t kLwe64MatrixChunkRows = 4096;
inline constexpr int kLwe64MaxLogP = 20;  // Delta'/2 = 2^11 must stay above n/2 + 1 = 1025

std::span<const Lwe64Params> lwe64_param_table();
Result<Lwe64Params> find_lwe64_params(std::string_view name, bool allow_insecure = false);

// log2 of the union-bound probability that one decoded entry is wrong, for a matrix whose
// entries are at most `max_entry` over `cols` columns: deterministic error n/2 + 1 (+ the query
// rounding max_entry cols 2^(drop_bits - 1) / 2^32, + the answer rounding 2^(31 - answer_bits)
// below 32 bits), Gaussian deviation sigma max_entry sqrt(cols) / 2^32, threshold
// Delta'/2 = 2^(31 - log_p).
double lwe64_decoding_failure_log2(const Lwe64Params& params, std::size_t cols,
                                   std::uint32_t max_entry, int log_p, int drop_bits = 0,
                                   int answer_bits = 32);

// Bytes per query entry on the wire for `drop_bits` (0, 8 or 16): 8, 7 or 6.
inline std::size_t lwe64_entry_bytes(int drop_bits) {
  return static_cast<std::size_t>(64 - drop_bits) / 8;
}
// v -> round(v / 2^drop_bits) mod 2^(64 - drop_bits), in place (the client, before sending).
void lwe64_switch_query(std::span<std::uint64_t> v, int drop_bits);

// Rows [first_row, first_row + rows) of A, n entries each, into `out` with `ld` per row.
void expand_lwe64_matrix(const Seed& seed, std::size_t first_row, std::size_t rows, std::size_t n,
                         std::size_t ld, std::uint64_t* out);

// The hint: rounded high halves of H = D A, rows x n (row-major, no padding).
std::vector<std::uint32_t> compute_lwe64_hint(const std::uint8_t* d, std::size_t rows,
                                              std::size_t cols, std::size_t stride,
                                              const Seed& a_seed, std::size_t n, unsigned threads);

// The answers to m queries (each `stride` entries, switched by `drop_bits`): rounded high halves
// of 2^drop_bits D v_i, m x rows.
std::vector<std::uint32_t> lwe64_answer(const std::uint8_t* d, std::size_t rows, std::size_t stride,
                                        std::span<const std::uint64_t> queries, std::size_t m,
                                        int drop_bits = 0);

inline std::uint32_t round_high_half(std::uint64_t x) {
  return static_cast<std::uint32_t>((x + (std::uint64_t{1} << 31)) >> 32);
}
// a -> round(a / 2^(32 - bits)) mod 2^bits (1 <= bits <= 32): an answer's high `bits` bits.
inline std::uint32_t lwe64_switch_answer(std::uint32_t a, int bits) {
  if (bits >= 32) return a;
  const int shift = 32 - bits;
  const std::uint64_t rounded = (std::uint64_t{a} + (std::uint64_t{1} << (shift - 1))) >> shift;
  return static_cast<std::uint32_t>(rounded & ((std::uint64_t{1} << bits) - 1));
}

// ---- client side (lwe64_client.cpp; the provider links none of it) ----

class Lwe64Secret {
 public:
  static Lwe64Secret sample(const Lwe64Params& params, Prng& prng);     // uniform ternary
  static Lwe64Secret from_values(std::span<const std::int8_t> values);  // tests
  Lwe64Secret(Lwe64Secret&&) noexcept = default;
  Lwe64Secret& operator=(Lwe64Secret&&) noexcept = default;
  Lwe64Secret(const Lwe64Secret&) = delete;
  Lwe64Secret& operator=(const Lwe64Secret&) = delete;
  std::size_t dimension() const { return s_.size(); }
  // s_j as an element of Z_{2^32} (-1 is 2^32 - 1): what decoding needs.
  std::span<const std::uint32_t> values_mod_2_32() const { return s_.span(); }

 private:
  Lwe64Secret() = default;
  SecureVector<std::uint32_t> s_;
};

// A one-time mask A s + e for `cols` columns (the query-independent part of a query), with its
// secret. Precomputable before the query is known; consumed by encrypt_blocks.
class Lwe64Mask {
 public:
  static Result<Lwe64Mask> create(const Lwe64Params& params, const Seed& a_seed, std::size_t cols,
                                  std::size_t stride, Prng& prng);
  // `count` masks with independent secrets over one expansion of A (the expansion, ~cols x n x
  // 8 bytes of AES-CTR output, dominates the cost of one mask).
  static Result<std::vector<Lwe64Mask>> create_batch(const Lwe64Params& params, const Seed& a_seed,
                                                     std::size_t cols, std::size_t stride,
                                                     std::size_t count, Prng& prng);
  Lwe64Mask(Lwe64Mask&&) noexcept = default;
  Lwe64Mask& operator=(Lwe64Mask&&) noexcept = default;
  Lwe64Mask(const Lwe64Mask&) = delete;
  Lwe64Mask& operator=(const Lwe64Mask&) = delete;
  std::size_t columns() const { return cols_; }
  std::size_t stride() const { return mask_.size(); }
  const Lwe64Secret& secret() const { return secret_; }
  // The query: mask + Delta u where u is `block` (width block.size()) at block index `chosen`
  // and zero elsewhere; written to every column under a mask, so the memory access pattern does
  // not depend on `chosen`. Needs blocks * width <= cols.
  Result<std::vector<std::uint64_t>> encrypt_block(std::size_t blocks, std::size_t chosen,
                                                   std::span<const std::int32_t> block,
                                                   int log_p) const;

 private:
  explicit Lwe64Mask(Lwe64Secret secret) : secret_(std::move(secret)) {}
  Lwe64Secret secret_;
  SecureVector<std::uint64_t> mask_;
  std::size_t cols_ = 0;
};

// D u mod p for each of m answers (m x rows, from lwe64_answer) against the hint (rows x n) and
// the m secrets, in order. Result m x rows, entries in [0, p).
Result<std::vector<std::uint32_t>> lwe64_decode(std::span<const std::uint32_t> answers,
                                                std::span<const std::uint32_t> hint,
                                                std::size_t rows, std::size_t n,
                                                std::span<const Lwe64Secret* const> secrets,
                                                int log_p);

}  // namespace privsearch::pir
