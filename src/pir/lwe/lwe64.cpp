#include "pir/lwe/lwe64.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "pir/lwe/kernels64.h"
#include "pir/lwe/lwe_params.h"
#include "pir/lwe/matrix_rows.h"

namespace privsearch::pir {
namespace {

constexpr std::array<Lwe64Params, 2> kLwe64Table = {{
    {"scoring-n2048-ternary", 2048, 81920.0, true,
     "q = 2^64, uniform ternary secret, rounded Gaussian sigma 81,920: q / sigma = 2^47.7 at "
     "n = 2048, below the HE-standard 128-bit row for n = 2048 (log q 54 at sigma 3.2, "
     "q / sigma = 2^52.3; Albrecht et al., Homomorphic Encryption Security Standard, 2018)"},
    {"insecure-test-n64-ternary", 64, 81920.0, false, "tests only: n = 64 gives no security"},
}};

// Rows of A stay at most this many at once while the hint is computed (64 MiB at n = 2048).
constexpr std::size_t kHintRowsPerPass = 4096;

}  // namespace

std::span<const Lwe64Params> lwe64_param_table() { return kLwe64Table; }

Result<Lwe64Params> find_lwe64_params(std::string_view name, bool allow_insecure) {
  return find_param_row(lwe64_param_table(), name, allow_insecure, "LWE (q = 2^64)");
}

double lwe64_decoding_failure_log2(const Lwe64Params& params, std::size_t cols,
                                   std::uint32_t max_entry, int log_p, int drop_bits,
                                   int answer_bits) {
  const double rounding = drop_bits > 0 ? max_entry * static_cast<double>(cols) *
                                              std::ldexp(1.0, drop_bits - 1) / 0x1p32
                                        : 0.0;
  const double answer_rounding = answer_bits < 32 ? std::ldexp(1.0, 31 - answer_bits) : 0.0;
  const double deterministic = params.n / 2.0 + 1.0 + rounding + answer_rounding;
  const double s = params.sigma * max_entry * std::sqrt(static_cast<double>(cols)) / 0x1p32;
  const double t = std::ldexp(1.0, 31 - log_p) - deterministic;
  if (t <= 0) return 0.0;
  if (s == 0) return -1e9;
  return 1.0 - (t * t) / (2.0 * s * s) / std::log(2.0);
}

void expand_lwe64_matrix(const Seed& seed, std::size_t first_row, std::size_t rows, std::size_t n,
                         std::size_t ld, std::uint64_t* out) {
  detail::expand_matrix_rows(seed, kLwe64MatrixStream, kLwe64MatrixChunkRows, first_row, rows, n,
                             ld, out);
}

std::vector<std::uint32_t> compute_lwe64_hint(const std::uint8_t* d, std::size_t rows,
                                              std::size_t cols, std::size_t stride,
                                              const Seed& a_seed, std::size_t n, unsigned threads) {
  const std::size_t ld = (n + 31) / 32 * 32;
  std::vector<std::uint64_t> h(rows * ld, 0);
  std::vector<std::uint64_t> a(std::min(cols, kHintRowsPerPass) * ld, 0);
  for (std::size_t c0 = 0; c0 < cols; c0 += kHintRowsPerPass) {
    const std::size_t chunk = std::min(kHintRowsPerPass, cols - c0);
    expand_lwe64_matrix(a_seed, c0, chunk, n, ld, a.data());
    matmul_u8_u64(d + c0, rows, chunk, stride, a.data(), ld, h.data(), threads);
  }
  std::vector<std::uint32_t> hint(rows * n);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t j = 0; j < n; ++j) hint[r * n + j] = round_high_half(h[r * ld + j]);
  }
  return hint;
}

std::vector<std::uint32_t> lwe64_answer(const std::uint8_t* d, std::size_t rows, std::size_t stride,
                                        std::span<const std::uint64_t> queries, std::size_t m,
                                        int drop_bits) {
  std::vector<std::uint64_t> full(m * rows);
  // 48-bit entries need 6 digits; 56-bit ones 7, which the kernel rounds up to 8.
  const std::size_t digits = drop_bits == 16 ? 6 : 8;
  matvec_u8_u64_batch(d, rows, stride, queries.data(), m, full.data(), digits);
  std::vector<std::uint32_t> out(full.size());
  for (std::size_t i = 0; i < full.size(); ++i) out[i] = round_high_half(full[i] << drop_bits);
  return out;
}

void lwe64_switch_query(std::span<std::uint64_t> v, int drop_bits) {
  if (drop_bits == 0) return;
  const std::uint64_t half = std::uint64_t{1} << (drop_bits - 1);
  for (auto& x : v) x = (x + half) >> drop_bits;
}

}  // namespace privsearch::pir
