// The SimplePIR core (Henzinger et al. 2023): A from a seed, the LWE secret and error, the query,
// the hint H = D A, the answer D qu, and decoding. ZipPIR reuses all of it and only replaces the
// client's copy of H by a Paillier-compressed H s (pir/zippir).
//
//   query   qu = A s + e + Delta u_col   in Z_q^{d0}, q = 2^32, Delta = q / p, p = 2^8
//   answer  ans = D qu = H s + D e + Delta D[:, col]
//   decode  D[r][col] = round((ans[r] - (H s)[r]) / Delta) mod p
// The one-hot u_col is added to every coordinate under a mask (no secret-indexed write).
// A (d0 x n) comes in chunks of 4096 rows, chunk k from Prng stream kLweMatrixStream + k of the
// public seed, so any side can expand any rows, in parallel, without storing A.
// Thread safety: free functions are pure; LweSecret is move-only and wiped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/csprng.h"
#include "core/secure_buffer.h"
#include "core/status.h"
#include "pir/lwe/database.h"
#include "pir/lwe/lwe_params.h"

namespace privsearch::pir {

inline constexpr std::uint32_t kPlaintextModulus = 256;          // p = 2^8
inline constexpr std::uint32_t kDelta = std::uint32_t{1} << 24;  // q / p
inline constexpr std::size_t kLweMatrixChunkRows = 4096;
inline constexpr std::uint64_t kLweMatrixStream = 0x4c57454100000000ull;  // "LWEA"

// Rows [first_row, first_row + rows) of A, `n` entries each, into `out` with `ld` per row
// (padding left untouched).
void expand_lwe_matrix(const Seed& seed, std::size_t first_row, std::size_t rows, std::size_t n,
                       std::size_t ld, std::uint32_t* out);

// Rounded Gaussian via a cumulative table over [-64, 64] (10 sigma at sigma = 6.4), scanned in
// full for every sample (constant time). sigma in [1, 6.4].
class GaussianSampler {
 public:
  explicit GaussianSampler(double sigma);
  std::int32_t sample(Prng& prng) const;

 private:
  std::vector<std::uint64_t> cdf_;  // P(X <= -64 + k) * 2^63, k = 0 .. 127
};

class LweSecret {
 public:
  static LweSecret sample(const LweParams& params, Prng& prng);
  // For tests: a given secret (values are reduced mod 2^32).
  static LweSecret from_values(LweSecretKind kind, std::span<const std::uint32_t> values);

  LweSecret(LweSecret&&) noexcept = default;
  LweSecret& operator=(LweSecret&&) noexcept = default;
  LweSecret(const LweSecret&) = delete;
  LweSecret& operator=(const LweSecret&) = delete;

  std::size_t dimension() const { return s_.size(); }
  LweSecretKind kind() const { return kind_; }
  // Entries as elements of Z_q (ternary -1 is 2^32 - 1).
  std::span<const std::uint32_t> values() const { return s_.span(); }

 private:
  LweSecret() = default;
  LweSecretKind kind_ = LweSecretKind::kBinary;
  SecureVector<std::uint32_t> s_;
};

// qu for column `column` of a database of `shape` (length shape.stride, zero past `columns`).
Result<std::vector<std::uint32_t>> make_lwe_query(const LweParams& params, const Seed& a_seed,
                                                  const DatabaseShape& shape,
                                                  const LweSecret& secret, std::size_t column,
                                                  Prng& prng);

// H = D A (rows x ld, ld = n rounded up to 16).
std::vector<std::uint32_t> compute_lwe_hint(const LweDatabase& db, const Seed& a_seed,
                                            std::size_t n, unsigned threads);
// The same for `rows` rows of a database of `shape` given as raw bytes (rows x stride): a row
// shard's part of H (its rows of D times the same A).
std::vector<std::uint32_t> compute_lwe_hint_rows(const std::uint8_t* rows_data, std::size_t rows,
                                                 const DatabaseShape& shape, const Seed& a_seed,
                                                 std::size_t n, unsigned threads);
inline std::size_t hint_ld(std::size_t n) { return (n + 15) / 16 * 16; }

// ans = D qu (rows entries). qu.size() must equal shape.stride.
Result<std::vector<std::uint32_t>> lwe_answer(const LweDatabase& db,
                                              std::span<const std::uint32_t> query);

// round(x / Delta) mod p.
inline std::uint8_t lwe_round(std::uint32_t x) {
  return static_cast<std::uint8_t>((x + kDelta / 2) >> 24);
}

// SimplePIR's client with the whole hint: the bytes of the record in `column` at rows
// [first_row, first_row + count).
std::vector<std::uint8_t> simplepir_decode(std::span<const std::uint32_t> answer,
                                           std::span<const std::uint32_t> hint, std::size_t ld,
                                           const LweSecret& secret, std::size_t first_row,
                                           std::size_t count);

}  // namespace privsearch::pir
