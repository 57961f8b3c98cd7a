#include "pir/zippir/zippir_params.h"

#include <cmath>
#include <cstring>

#include "core/bytes.h"
#include "core/sha256.h"
#include "pir/lwe/lwe.h"
#include "pir/paillier/paillier.h"

namespace privsearch::pir {

Status ZipPirParams::validate() const {
  if (lwe.secret != LweSecretKind::kBinary) {
    return invalid_argument_error("ZipPIR needs a binary LWE secret; `" + std::string(lwe.name) +
                                  "` has a " + std::string(secret_kind_name(lwe.secret)) +
                                  " secret");
  }
  if (!lwe.secure && !allow_insecure) {
    return invalid_argument_error("LWE parameter set `" + std::string(lwe.name) +
                                  "` is insecure (tests only)");
  }
  if (lwe.log_q != 32) return invalid_argument_error("ZipPIR needs q = 2^32");
  if (paillier_bits > kPaillierMaxBits || paillier_bits % 2 != 0 ||
      (paillier_bits < kPaillierMinSecureBits && !allow_insecure) || paillier_bits < 256) {
    return invalid_argument_error("ZipPIR `paillier_bits` = " + std::to_string(paillier_bits) +
                                  " must be even and in [2048, 8192] (3072 default)");
  }
  if (hint_bits < 9 || hint_bits > 32) {
    return out_of_range_error("ZipPIR `hint_bits` = " + std::to_string(hint_bits) +
                              " is outside [9, 32]");
  }
  if (slots_per_plaintext() == 0) {
    return invalid_argument_error("ZipPIR: no slot fits a Paillier plaintext");
  }
  return Status();
}

std::size_t ZipPirParams::slots_per_plaintext() const {
  const double usable =
      static_cast<double>(paillier_bits - 1) - std::log2(static_cast<double>(lwe.n) + 2.0);
  if (usable <= 0) return 0;
  return static_cast<std::size_t>(std::floor(usable / hint_bits));
}

std::size_t ZipPirParams::packed_rows(const DatabaseShape& shape) const {
  const std::size_t k = slots_per_plaintext();
  return (shape.rows + k - 1) / k;
}

double ZipPirParams::correctness_log2(std::size_t columns) const {
  const double unit = std::ldexp(1.0, shift());
  const double margin = std::ldexp(1.0, hint_bits - 9);  // Delta'/2 in units of gamma
  const double sd_lwe = lwe.sigma * 255.0 * std::sqrt(static_cast<double>(columns)) / unit;
  const double sd_uniform = std::sqrt((static_cast<double>(lwe.n) + 1.0) / 12.0);
  // Rounding and carry deviation; the carry estimate |s|/2 itself is off by at most 1.
  const double sd = std::sqrt(sd_lwe * sd_lwe + 2 * sd_uniform * sd_uniform);
  const double t = margin - 1.5;
  if (t <= 0) return 0.0;
  return 1.0 - (t * t) / (2.0 * sd * sd) / std::log(2.0);
}

std::size_t ZipPirParams::online_product_bits() const {
  const std::size_t pbits = slots_per_plaintext() * static_cast<std::size_t>(hint_bits);
  return pbits + static_cast<std::size_t>(paillier_bits) +
         static_cast<std::size_t>(std::ceil(std::log2(static_cast<double>(lwe.n) + 1))) + 1;
}

std::uint64_t ZipPirParams::id(const DatabaseShape& shape) const {
  std::string text = std::string(lwe.name) + "|" + std::to_string(paillier_bits) + "|" +
                     std::to_string(hint_bits) + "|" + std::to_string(shape.records) + "|" +
                     std::to_string(shape.record_bytes) + "|" +
                     std::to_string(shape.records_per_column);
  const auto digest = sha256(byte_view(text));
  std::uint64_t v = 0;
  std::memcpy(&v, digest.data(), 8);
  return v;
}

}  // namespace privsearch::pir
