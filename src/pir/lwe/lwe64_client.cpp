// Client half of the q = 2^64 scheme (secrets, masks, queries, decoding), in its own object file
// so the provider binary links none of it.
#include <cmath>
#include <numbers>
#include <string>

#include "core/constant_time.h"
#include "pir/lwe/kernels64.h"
#include "pir/lwe/lwe64.h"

namespace privsearch::pir {
namespace {

// Rounded continuous Gaussian (Box-Muller on 53-bit uniforms from the CSPRNG). At sigma =
// 81,920 the rounded and the discrete Gaussian are statistically indistinguishable for the
// purposes of the estimate (sigma is far above the smoothing parameter). Every sample costs the
// same operations (no rejection); libm's log/cos timing does not depend on the secret bits in
// a way we know of, but this is not a hardened constant-time sampler.
std::int64_t sample_rounded_gaussian(double sigma, Prng& prng) {
  const double u1 = (static_cast<double>(prng.next_u64() >> 11) + 1.0) * 0x1p-53;  // (0, 1]
  const double u2 = static_cast<double>(prng.next_u64() >> 11) * 0x1p-53;          // [0, 1)
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  return std::llround(sigma * z);
}

}  // namespace

Lwe64Secret Lwe64Secret::sample(const Lwe64Params& params, Prng& prng) {
  Lwe64Secret s;
  s.s_ = SecureVector<std::uint32_t>(params.n);
  for (std::size_t i = 0; i < params.n; ++i) {
    const std::uint64_t r = prng.next_u64();
    const std::uint64_t t =
        static_cast<std::uint64_t>((static_cast<unsigned __int128>(r) * 3) >> 64);  // 0, 1, 2
    s.s_[i] = static_cast<std::uint32_t>(t) - 1u;
  }
  return s;
}

Lwe64Secret Lwe64Secret::from_values(std::span<const std::int8_t> values) {
  Lwe64Secret s;
  s.s_ = SecureVector<std::uint32_t>(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    s.s_[i] = static_cast<std::uint32_t>(static_cast<std::int32_t>(values[i]));
  }
  return s;
}

Result<Lwe64Mask> Lwe64Mask::create(const Lwe64Params& params, const Seed& a_seed, std::size_t cols,
                                    std::size_t stride, Prng& prng) {
  PRIVSEARCH_ASSIGN_OR_RETURN(auto masks, create_batch(params, a_seed, cols, stride, 1, prng));
  return std::move(masks.front());
}

Result<std::vector<Lwe64Mask>> Lwe64Mask::create_batch(const Lwe64Params& params,
                                                       const Seed& a_seed, std::size_t cols,
                                                       std::size_t stride, std::size_t count,
                                                       Prng& prng) {
  if (cols == 0 || stride < cols || stride % 64 != 0 || count == 0) {
    return invalid_argument_error("LWE masks: " + std::to_string(count) + " for " +
                                  std::to_string(cols) + " columns with row stride " +
                                  std::to_string(stride));
  }
  const std::size_t n = params.n;
  std::vector<Lwe64Mask> masks;
  // s_j in {-1, 0, 1} as elements of Z_{2^64}, all secrets side by side.
  SecureVector<std::uint64_t> s(count * n);
  for (std::size_t i = 0; i < count; ++i) {
    masks.push_back(Lwe64Mask(Lwe64Secret::sample(params, prng)));
    masks.back().cols_ = cols;
    masks.back().mask_ = SecureVector<std::uint64_t>(stride);
    const auto s32 = masks.back().secret_.values_mod_2_32();
    for (std::size_t j = 0; j < n; ++j) {
      s[i * n + j] =
          static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(s32[j])));
    }
  }
  std::vector<std::uint64_t> row(n);
  for (std::size_t c0 = 0; c0 < cols; c0 += kLwe64MatrixChunkRows) {
    Prng stream = Prng::from_seed(a_seed, kLwe64MatrixStream + c0 / kLwe64MatrixChunkRows);
    const std::size_t end = std::min(cols, c0 + kLwe64MatrixChunkRows);
    for (std::size_t c = c0; c < end; ++c) {
      stream.fill(std::span(reinterpret_cast<std::uint8_t*>(row.data()), n * 8));
      for (std::size_t i = 0; i < count; ++i) {
        const std::uint64_t* si = s.data() + i * n;
        std::uint64_t acc = 0;
        for (std::size_t j = 0; j < n; ++j) acc += row[j] * si[j];
        masks[i].mask_[c] =
            acc + static_cast<std::uint64_t>(sample_rounded_gaussian(params.sigma, prng));
      }
    }
  }
  return masks;
}

Result<std::vector<std::uint64_t>> Lwe64Mask::encrypt_block(std::size_t blocks, std::size_t chosen,
                                                            std::span<const std::int32_t> block,
                                                            int log_p) const {
  const std::size_t width = block.size();
  if (width == 0 || blocks == 0 || blocks * width > cols_ || chosen >= blocks) {
    return invalid_argument_error("LWE query: block " + std::to_string(chosen) + " of " +
                                  std::to_string(blocks) + " x " + std::to_string(width) +
                                  " columns does not fit " + std::to_string(cols_));
  }
  if (log_p < 1 || log_p > kLwe64MaxLogP) {
    return invalid_argument_error("LWE plaintext modulus 2^" + std::to_string(log_p) +
                                  " outside [2^1, 2^" + std::to_string(kLwe64MaxLogP) + "]");
  }
  const int delta_log2 = 64 - log_p;
  std::vector<std::uint64_t> v(mask_.span().begin(), mask_.span().end());
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::uint64_t sel = ct::mask_from_bit(ct::equal(b, chosen));
    for (std::size_t j = 0; j < width; ++j) {
      const std::uint64_t u = static_cast<std::uint64_t>(static_cast<std::int64_t>(block[j]));
      v[b * width + j] += (u << delta_log2) & sel;
    }
  }
  return v;
}

Result<std::vector<std::uint32_t>> lwe64_decode(std::span<const std::uint32_t> answers,
                                                std::span<const std::uint32_t> hint,
                                                std::size_t rows, std::size_t n,
                                                std::span<const Lwe64Secret* const> secrets,
                                                int log_p) {
  const std::size_t m = secrets.size();
  if (answers.size() != m * rows || hint.size() != rows * n) {
    return invalid_argument_error("LWE answers of " + std::to_string(answers.size()) +
                                  " entries and a hint of " + std::to_string(hint.size()) +
                                  " for " + std::to_string(m) + " x " + std::to_string(rows) +
                                  " rows, n = " + std::to_string(n));
  }
  if (log_p < 1 || log_p > kLwe64MaxLogP) {
    return invalid_argument_error("LWE plaintext modulus 2^" + std::to_string(log_p) +
                                  " outside the decodable range");
  }
  SecureVector<std::uint32_t> s(m * n);
  for (std::size_t i = 0; i < m; ++i) {
    if (secrets[i]->dimension() != n) {
      return invalid_argument_error("LWE secret of dimension " +
                                    std::to_string(secrets[i]->dimension()) +
                                    " for n = " + std::to_string(n));
    }
    const auto v = secrets[i]->values_mod_2_32();
    std::copy(v.begin(), v.end(), s.data() + i * n);
  }
  std::vector<std::uint32_t> hs(m * rows);
  dot_u32_batch(hint.data(), rows, n, s.data(), m, hs.data());
  const int shift = 32 - log_p;
  const std::uint32_t half = std::uint32_t{1} << (shift - 1);
  const std::uint32_t p_mask = (std::uint32_t{1} << log_p) - 1;
  for (std::size_t k = 0; k < hs.size(); ++k) {
    hs[k] = ((answers[k] - hs[k] + half) >> shift) & p_mask;
  }
  return hs;
}

}  // namespace privsearch::pir
