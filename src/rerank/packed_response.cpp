#include "rerank/packed_response.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "core/bytes.h"

namespace privsearch::rerank {

namespace {
constexpr std::uint8_t kPackedMagic[4] = {'P', 'S', 'P', 'K'};
constexpr std::uint16_t kPackedVersion = 1;
constexpr double kDeviations = 5.0;

int max_c1_bits(const ckks::Params& params) {
  return static_cast<int>(params.q_moduli()[0].bit_count()) - params.log_n() - 2;
}

// Standard deviations (in units of the message scale) of the two rounding errors.
double c1_error_sd(const ckks::Params& params, int bits, double scale) {
  const double w = static_cast<double>(params.q_moduli()[0].value()) / std::ldexp(1.0, bits);
  return w * std::sqrt(static_cast<double>(params.n()) / 18.0) / scale;
}
double c0_error_sd(const ckks::Params& params, int bits, double scale) {
  const double w = static_cast<double>(params.q_moduli()[0].value()) / std::ldexp(1.0, bits);
  return w / std::sqrt(12.0) / scale;
}

// round(x 2^bits / q) mod 2^bits for x in [0, q), exactly (x 2^bits < 2^107 fits 128 bits).
std::uint64_t switch_modulus(std::uint64_t x, std::uint64_t q, int bits) {
  const unsigned __int128 num = (static_cast<unsigned __int128>(x) << bits) + q / 2;
  const auto y = static_cast<std::uint64_t>(num / q);
  return y & ((std::uint64_t{1} << bits) - 1);
}
}  // namespace

std::vector<std::size_t> packed_positions(const KernelLayout& layout, std::size_t output) {
  std::vector<std::size_t> out;
  const std::size_t first = output * layout.capacity();
  for (std::size_t c = first; c < layout.k() && c < first + layout.capacity(); ++c) {
    out.push_back(layout.slot_map()[c].slot);
  }
  return out;
}

Result<PackedBits> choose_packed_bits(const ckks::Params& params, double scale,
                                      const ckks::CompactOptions& options) {
  if (!(std::isfinite(options.value_bound) && options.value_bound > 0 &&
        std::isfinite(options.precision_bits) && options.precision_bits > 0 &&
        std::isfinite(scale) && scale > 0)) {
    return invalid_argument_error(
        "packed compaction: value bound, precision and scale must be "
        "finite and positive");
  }
  const double budget = options.value_bound * std::exp2(-options.precision_bits) / std::sqrt(2.0);
  PackedBits out;
  const int q_bits = static_cast<int>(params.q_moduli()[0].bit_count());
  for (out.c1_bits = 1; out.c1_bits <= max_c1_bits(params); ++out.c1_bits) {
    if (kDeviations * c1_error_sd(params, out.c1_bits, scale) <= budget) break;
  }
  for (out.c0_bits = 1; out.c0_bits <= q_bits; ++out.c0_bits) {
    if (kDeviations * c0_error_sd(params, out.c0_bits, scale) <= budget) break;
  }
  if (out.c1_bits > max_c1_bits(params) || out.c0_bits > q_bits) {
    return out_of_range_error(fmt::format(
        "packed compaction cannot reach {:.1f} bits of precision at scale 2^{:.1f} (c1 is "
        "limited to {} bits)",
        options.precision_bits, std::log2(scale), max_c1_bits(params)));
  }
  return out;
}

double predicted_packed_precision_bits(const ckks::Params& params, const PackedBits& bits,
                                       double scale, double value_bound) {
  const double sd = std::hypot(c1_error_sd(params, bits.c1_bits, scale),
                               c0_error_sd(params, bits.c0_bits, scale));
  return std::log2(value_bound / (kDeviations * sd));
}

Result<PackedCiphertext> compact_packed(const ckks::Params& params, const ckks::Ciphertext& ct,
                                        std::span<const std::size_t> positions,
                                        const ckks::CompactOptions& options) {
  if (ct.level() != 0 || ct.params_id() != params.id()) {
    return failed_precondition_error("packed compaction needs a level-0 ciphertext of the params");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto bits, choose_packed_bits(params, ct.scale(), options));
  const std::size_t n = params.n();
  const std::uint64_t q = params.q_moduli()[0].value();
  std::vector<std::uint64_t> c0(ct.c0().row(0), ct.c0().row(0) + n);
  std::vector<std::uint64_t> c1(ct.c1().row(0), ct.c1().row(0) + n);
  params.ntt(0).inverse(c0.data());
  params.ntt(0).inverse(c1.data());
  PackedCiphertext out;
  out.params_id = params.id();
  out.c0_bits = bits.c0_bits;
  out.c1_bits = bits.c1_bits;
  out.scale = ct.scale() * std::ldexp(1.0, out.log_modulus()) / static_cast<double>(q);
  out.c0.reserve(positions.size());
  for (const std::size_t p : positions) {
    if (p >= n) return invalid_argument_error(fmt::format("coefficient {} outside [0, {})", p, n));
    out.c0.push_back(switch_modulus(c0[p], q, bits.c0_bits));
  }
  out.c1.resize(n);
  for (std::size_t j = 0; j < n; ++j) out.c1[j] = switch_modulus(c1[j], q, bits.c1_bits);
  return out;
}

Status check_packed_scale(const ckks::Params& params, int log_modulus, double scale) {
  const double q_log2 = std::log2(static_cast<double>(params.q_moduli()[0].value()));
  const double rho = std::log2(scale) + q_log2 - log_modulus - params.log_scale();
  if (!std::isfinite(rho) || std::abs(rho - std::round(rho)) > 1e-6 || std::round(rho) < 1 ||
      std::round(rho) > 40) {
    return data_loss_error(fmt::format(
        "packed ciphertext scale {} is not 2^(delta + rho) 2^k / q for a row scale rho in [1, 40]",
        scale));
  }
  return Status();
}

std::vector<std::uint8_t> serialize_packed(const PackedCiphertext& ct) {
  ByteWriter w;
  w.put_bytes(kPackedMagic);
  w.put_u16(kPackedVersion);
  w.put_bytes(ct.params_id);
  w.put_u8(static_cast<std::uint8_t>(ct.c0_bits));
  w.put_u8(static_cast<std::uint8_t>(ct.c1_bits));
  w.put_f64(ct.scale);
  w.put_u32(static_cast<std::uint32_t>(ct.c0.size()));
  w.put_u32(static_cast<std::uint32_t>(ct.c1.size()));
  w.put_packed(ct.c0, ct.c0_bits);
  w.put_packed(ct.c1, ct.c1_bits);
  return w.take();
}

Result<PackedCiphertext> deserialize_packed(const ckks::Params& params,
                                            std::span<const std::uint8_t> bytes,
                                            std::size_t expected_count) {
  ByteReader r(bytes);
  std::uint8_t magic[4];
  PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(magic));
  if (!std::equal(std::begin(magic), std::end(magic), std::begin(kPackedMagic))) {
    return data_loss_error("bad magic: not a packed rerank ciphertext");
  }
  std::uint16_t version = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u16(version));
  if (version != kPackedVersion) {
    return data_loss_error(fmt::format("unsupported packed ciphertext version {}", version));
  }
  PackedCiphertext ct;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(ct.params_id));
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params, ct.params_id, "packed ciphertext"));
  std::uint8_t b0 = 0, b1 = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u8(b0));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u8(b1));
  const int q_bits = static_cast<int>(params.q_moduli()[0].bit_count());
  if (b0 < 1 || b0 > q_bits || b1 < 1 || b1 > max_c1_bits(params)) {
    return data_loss_error(
        fmt::format("packed ciphertext widths b0 = {}, b1 = {} outside "
                    "[1, {}] and [1, {}]",
                    b0, b1, q_bits, max_c1_bits(params)));
  }
  ct.c0_bits = b0;
  ct.c1_bits = b1;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_f64(ct.scale));
  PRIVSEARCH_RETURN_IF_ERROR(check_packed_scale(params, ct.log_modulus(), ct.scale));
  std::uint32_t count = 0, n = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(count));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(n));
  if (count != expected_count || n != params.n()) {
    return data_loss_error(
        fmt::format("packed ciphertext with {} scores and {} coefficients; expected {} and {}",
                    count, n, expected_count, params.n()));
  }
  if (r.remaining() != packed_bytes(count, b0) + packed_bytes(n, b1)) {
    return data_loss_error("packed ciphertext length does not match its header");
  }
  ct.c0.resize(count);
  ct.c1.resize(n);
  PRIVSEARCH_RETURN_IF_ERROR(r.get_packed(ct.c0, b0, std::uint64_t{1} << b0, "packed c0"));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_packed(ct.c1, b1, std::uint64_t{1} << b1, "packed c1"));
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  return ct;
}

}  // namespace privsearch::rerank
