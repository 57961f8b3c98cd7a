// Client half of the SimplePIR core (secrets, errors, queries, decoding), in its own object
// file so the provider binary links none of it.
#include <cmath>
#include <string>

#include "core/constant_time.h"
#include "pir/lwe/lwe.h"

namespace privsearch::pir {

GaussianSampler::GaussianSampler(double sigma) {
  PRIVSEARCH_CHECK(sigma >= 1.0 && sigma <= 6.4, "Gaussian sigma outside [1, 6.4]");
  std::vector<double> w(129);
  double total = 0;
  for (int x = -64; x <= 64; ++x) {
    w[static_cast<std::size_t>(x + 64)] =
        std::exp(-static_cast<double>(x * x) / (2 * sigma * sigma));
    total += w[static_cast<std::size_t>(x + 64)];
  }
  cdf_.resize(128);
  double acc = 0;
  for (std::size_t k = 0; k < 128; ++k) {
    acc += w[k] / total;
    cdf_[k] = static_cast<std::uint64_t>(std::ldexp(std::min(acc, 1.0), 63));
  }
}

std::int32_t GaussianSampler::sample(Prng& prng) const {
  const std::uint64_t u = prng.next_u64() >> 1;
  std::uint64_t count = 0;
  for (std::uint64_t t : cdf_) count += ct::less_than(t, u + 1);  // t <= u
  return static_cast<std::int32_t>(count) - 64;
}

LweSecret LweSecret::sample(const LweParams& params, Prng& prng) {
  LweSecret s;
  s.kind_ = params.secret;
  s.s_ = SecureVector<std::uint32_t>(params.n);
  for (std::size_t i = 0; i < params.n; ++i) {
    const std::uint64_t r = prng.next_u64();
    switch (params.secret) {
      case LweSecretKind::kBinary:
        s.s_[i] = static_cast<std::uint32_t>(r & 1);
        break;
      case LweSecretKind::kTernary: {
        // Uniform in {-1, 0, 1} from 64 random bits: bias below 2^-62.
        const std::uint64_t t =
            static_cast<std::uint64_t>((static_cast<unsigned __int128>(r) * 3) >> 64);  // 0, 1, 2
        s.s_[i] = static_cast<std::uint32_t>(t) - 1u;  // 2^32-1, 0, 1
        break;
      }
      case LweSecretKind::kUniform:
        s.s_[i] = static_cast<std::uint32_t>(r);
        break;
    }
  }
  return s;
}

LweSecret LweSecret::from_values(LweSecretKind kind, std::span<const std::uint32_t> values) {
  LweSecret s;
  s.kind_ = kind;
  s.s_ = SecureVector<std::uint32_t>(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) s.s_[i] = values[i];
  return s;
}

Result<std::vector<std::uint32_t>> make_lwe_query(const LweParams& params, const Seed& a_seed,
                                                  const DatabaseShape& shape,
                                                  const LweSecret& secret, std::size_t column,
                                                  Prng& prng) {
  if (secret.dimension() != params.n) {
    return invalid_argument_error("LWE secret of dimension " + std::to_string(secret.dimension()) +
                                  " for `n` = " + std::to_string(params.n));
  }
  if (column >= shape.columns) {
    return out_of_range_error("PIR `column` = " + std::to_string(column) +
                              " >= " + std::to_string(shape.columns) + " columns");
  }
  const std::size_t n = params.n;
  std::vector<std::uint32_t> qu(shape.stride, 0);
  std::vector<std::uint32_t> chunk(kLweMatrixChunkRows * n);
  const std::uint32_t* s = secret.values().data();
  GaussianSampler gauss(params.sigma);
  for (std::size_t r0 = 0; r0 < shape.columns; r0 += kLweMatrixChunkRows) {
    const std::size_t rows = std::min(kLweMatrixChunkRows, shape.columns - r0);
    expand_lwe_matrix(a_seed, r0, rows, n, n, chunk.data());
    for (std::size_t r = 0; r < rows; ++r) {
      const std::uint32_t* a = chunk.data() + r * n;
      std::uint32_t acc = 0;
      for (std::size_t j = 0; j < n; ++j) acc += a[j] * s[j];
      const std::size_t c = r0 + r;
      const std::uint32_t e = static_cast<std::uint32_t>(gauss.sample(prng));
      // Delta on the selected column only, selected by mask.
      const std::uint32_t sel = static_cast<std::uint32_t>(ct::mask_from_bit(ct::equal(c, column)));
      qu[c] = acc + e + (kDelta & sel);
    }
  }
  return qu;
}

std::vector<std::uint8_t> simplepir_decode(std::span<const std::uint32_t> answer,
                                           std::span<const std::uint32_t> hint, std::size_t ld,
                                           const LweSecret& secret, std::size_t first_row,
                                           std::size_t count) {
  std::vector<std::uint8_t> out(count);
  const auto s = secret.values();
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t r = first_row + k;
    std::uint32_t hs = 0;
    for (std::size_t j = 0; j < s.size(); ++j) hs += hint[r * ld + j] * s[j];
    out[k] = lwe_round(answer[r] - hs);
  }
  return out;
}

}  // namespace privsearch::pir
