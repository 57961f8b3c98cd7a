#include "ckks/compact.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ckks/evaluator.h"
#include "ckks/internal/poly_util.h"
#include "ckks/serialization.h"

namespace privsearch::ckks {

namespace {
constexpr double kSigmas = 5.0;
constexpr int kMaxBits = 62;

// Slot-error standard deviation (in units of the 2^k modulus) per unit rounding width.
double c0_noise_factor(std::size_t n) { return std::sqrt(static_cast<double>(n) / 12.0); }
double c1_noise_factor(std::size_t n) { return static_cast<double>(n) * std::sqrt(2.0 / 36.0); }

// Scale after compaction: scale * 2^t * 2^k / q_0.
double compact_scale_for(const Params& params, double scale, const CompactLayout& l) {
  return scale * std::ldexp(1.0, l.scale_up_bits + l.log_modulus) /
         static_cast<double>(params.q_moduli()[0].value());
}
}  // namespace

double predicted_compact_precision_bits(const Params& params, const CompactLayout& layout,
                                        double compact_scale, double value_bound) {
  const std::size_t n = params.n();
  const double w0 = std::ldexp(1.0, layout.log_modulus - layout.c0_bits);
  const double w1 = std::ldexp(1.0, layout.log_modulus - layout.c1_bits);
  const double s0 = w0 * c0_noise_factor(n), s1 = w1 * c1_noise_factor(n);
  const double worst = kSigmas * std::sqrt(s0 * s0 + s1 * s1) / compact_scale;
  return std::log2(value_bound / worst);
}

Result<CompactLayout> choose_compact_layout(const Params& params, double scale,
                                            const CompactOptions& options) {
  if (!(options.value_bound > 0) || !std::isfinite(options.value_bound) ||
      !(options.precision_bits > 0) || options.precision_bits > 60) {
    return invalid_argument_error(
        fmt::format("compact options out of range: `value_bound` = {}, `precision_bits` = {}",
                    options.value_bound, options.precision_bits));
  }
  const double q0 = static_cast<double>(params.q_moduli()[0].value());
  CompactLayout l;
  // Largest t with scale * 2^t * bound <= q_0 / 4 (never negative: no scaling down).
  l.scale_up_bits = std::max(
      0, static_cast<int>(std::floor(std::log2(q0 / (4.0 * scale * options.value_bound)))));
  // rho = compact scale / 2^k, independent of k.
  const double rho = scale * std::ldexp(1.0, l.scale_up_bits) / q0;
  // Split the error budget evenly: each term's sigma at most bound * 2^-p / (5 sqrt 2).
  const double sigma =
      options.value_bound * std::exp2(-options.precision_bits) / (kSigmas * std::sqrt(2.0));
  const std::size_t n = params.n();
  // 2^(k - b) * factor <= sigma * rho * 2^k  <=>  b >= log2(factor / (sigma * rho)).
  l.c0_bits = static_cast<int>(std::ceil(std::log2(c0_noise_factor(n) / (sigma * rho))));
  l.c1_bits = static_cast<int>(std::ceil(std::log2(c1_noise_factor(n) / (sigma * rho))));
  l.c0_bits = std::max(l.c0_bits, 1);
  l.c1_bits = std::max(l.c1_bits, 1);
  l.log_modulus = std::max(l.c0_bits, l.c1_bits);
  if (l.log_modulus > kMaxBits) {
    return out_of_range_error(
        fmt::format("{} bits of precision for values up to {} need a {}-bit modulus (max {})",
                    options.precision_bits, options.value_bound, l.log_modulus, kMaxBits));
  }
  return l;
}

Result<CompactCiphertext> compact(const Params& params, const Ciphertext& ct,
                                  const CompactOptions& options) {
  const Evaluator evaluator(params);
  PRIVSEARCH_RETURN_IF_ERROR(evaluator.check_ciphertext(ct, "ciphertext"));
  PRIVSEARCH_ASSIGN_OR_RETURN(const CompactLayout l,
                              choose_compact_layout(params, ct.scale(), options));
  PRIVSEARCH_ASSIGN_OR_RETURN(Ciphertext low, evaluator.mod_switch_to_level(ct, 0));
  const std::size_t n = params.n();
  const ring::Modulus& q0 = params.q_moduli()[0];
  const std::uint64_t factor = q0.reduce(std::uint64_t{1} << l.scale_up_bits);
  const unsigned __int128 q = q0.value();
  auto squeeze = [&](const ring::RnsPoly& c, int bits) {
    std::vector<std::uint64_t> coeff(c.row(0), c.row(0) + n);
    params.ntt(0).inverse(coeff.data());
    const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
    for (auto& v : coeff) {
      const std::uint64_t scaled = q0.mul(v, factor);
      // round(v * 2^bits / q_0) mod 2^bits, exact in 128 bits (v < 2^61, bits <= 62).
      const unsigned __int128 num = (static_cast<unsigned __int128>(scaled) << bits) + q / 2;
      v = static_cast<std::uint64_t>(num / q) & mask;
    }
    return coeff;
  };
  auto c0 = squeeze(low.c0(), l.c0_bits);
  auto c1 = squeeze(low.c1(), l.c1_bits);
  return CompactCiphertext(params.id(), l, compact_scale_for(params, ct.scale(), l), std::move(c0),
                           std::move(c1));
}

// body: u8 k | u8 b0 | u8 b1 | u8 t | f64 scale | c0 (n x b0 bits) | c1 (n x b1 bits)
std::vector<std::uint8_t> serialize_compact(const CompactCiphertext& ct) {
  ByteWriter w;
  const auto& l = ct.layout();
  write_header(w, ObjectType::kCompactCiphertext, ct.params_id());
  w.put_u8(static_cast<std::uint8_t>(l.log_modulus));
  w.put_u8(static_cast<std::uint8_t>(l.c0_bits));
  w.put_u8(static_cast<std::uint8_t>(l.c1_bits));
  w.put_u8(static_cast<std::uint8_t>(l.scale_up_bits));
  w.put_f64(ct.scale());
  w.put_packed(ct.c0(), l.c0_bits);
  w.put_packed(ct.c1(), l.c1_bits);
  return w.take();
}

Result<CompactCiphertext> deserialize_compact(const Params& params,
                                              std::span<const std::uint8_t> bytes) {
  ByteReader r(bytes);
  ParamsId id{};
  PRIVSEARCH_RETURN_IF_ERROR(read_header(r, ObjectType::kCompactCiphertext, id));
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params, id, "serialized compact ciphertext"));
  std::uint8_t k = 0, b0 = 0, b1 = 0, t = 0;
  double scale = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u8(k));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u8(b0));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u8(b1));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u8(t));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_f64(scale));
  if (k < 1 || k > kMaxBits || b0 < 1 || b1 < 1 || b0 > k || b1 > k || std::max(b0, b1) != k ||
      t > 62) {
    return data_loss_error(fmt::format(
        "compact layout k = {}, b0 = {}, b1 = {}, t = {} is inconsistent (need 1 <= b <= k = "
        "max(b0, b1) <= {})",
        k, b0, b1, t, kMaxBits));
  }
  if (!(scale >= 1.0) || std::log2(scale) >= k) {
    return data_loss_error(fmt::format("compact scale {} outside [1, 2^{})", scale, k));
  }
  const std::size_t n = params.n();
  const std::size_t expected = packed_bytes(n, b0) + packed_bytes(n, b1);
  if (r.remaining() != expected) {
    return data_loss_error(
        fmt::format("compact ciphertext body is {} bytes, expected {}", r.remaining(), expected));
  }
  std::vector<std::uint64_t> c0(n), c1(n);
  const std::uint64_t bound0 = std::uint64_t{1} << b0, bound1 = std::uint64_t{1} << b1;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_packed(c0, b0, bound0, "compact c0"));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_packed(c1, b1, bound1, "compact c1"));
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  CompactLayout l{k, b0, b1, t};
  return CompactCiphertext(params.id(), l, scale, std::move(c0), std::move(c1));
}

}  // namespace privsearch::ckks
