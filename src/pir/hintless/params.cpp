#include "pir/hintless/params.h"

#include <array>
#include <cmath>
#include <string>

#include "pir/lwe/lwe_params.h"
#include "ring/primes.h"

namespace privsearch::pir::hintless {
namespace {

// 2^28 - 2^16 + 1 and 2^28 - 2^24 - 2^21 + 1: both prime and 1 mod 4096 (so NTT-friendly for
// every d <= 2048); ypir's DEFAULT_MODULI.
constexpr std::uint64_t kPrimeA = 268369921;
constexpr std::uint64_t kPrimeB = 249561089;

constexpr std::array<HintlessParams, 2> kTable = {{
    {"ypir-sp-d2048", 0x59500801, 2048, kPrimeA, kPrimeB, 6.4, 14, 3, 19, 20, true,
     "YPIR (ePrint 2024/270) Table 1 and section 4.6 (YPIR+SP): d = 2048, q = 268369921 * "
     "249561089 (log2 q = 55.89), sigma = 6.4 for errors and the secret (Def. 2.2), p = 2^14, "
     "gadget z = 2^19 with t = 3, response moduli 2^28 / 2^20; HE standard n = 2048 allows "
     "log2 q <= 56 with an error-distribution secret"},
    {"insecure-test-ypir-sp-d256", 0x59500101, 256, kPrimeA, kPrimeB, 6.4, 14, 3, 19, 20, false,
     "tests only: d = 256 gives no security"},
}};

// HE standard (Albrecht et al. 2018) Table 1, 128-bit classical, error-distribution secret:
// the largest log2 q for each ring degree.
double he_standard_max_log_q(std::size_t d) {
  switch (d) {
    case 1024:
      return 29;
    case 2048:
      return 56;
    case 4096:
      return 111;
    default:
      return 0;
  }
}

}  // namespace

int HintlessParams::log_d() const {
  int l = 0;
  while ((std::size_t{1} << l) < d) ++l;
  return l;
}

double HintlessParams::log2_q() const {
  return std::log2(static_cast<double>(q_a)) + std::log2(static_cast<double>(q_b));
}

std::size_t HintlessParams::output_bytes() const {
  return d * static_cast<std::size_t>(28 + response_b_bits) / 8;
}

std::size_t HintlessParams::packing_key_bytes() const {
  return static_cast<std::size_t>(log_d()) * static_cast<std::size_t>(gadget_digits) * d * 56 / 8;
}

std::span<const HintlessParams> hintless_param_table() { return kTable; }

Status check_hintless_params(const HintlessParams& p) {
  const std::string name(p.name);
  if (p.d < 8 || (p.d & (p.d - 1)) != 0) {
    return invalid_argument_error("hintless `" + name + "`: d = " + std::to_string(p.d) +
                                  " is not a power of two >= 8");
  }
  for (std::uint64_t q : {p.q_a, p.q_b}) {
    // 2^27 < q < 2^28: the kernels' 58-bit reduction (ring_context.h) needs both bounds.
    if (!ring::is_prime(q) || q % (2 * p.d) != 1 || q >= (std::uint64_t{1} << 28) ||
        q <= (std::uint64_t{1} << 27)) {
      return invalid_argument_error("hintless `" + name + "`: modulus " + std::to_string(q) +
                                    " is not a 28-bit prime = 1 mod 2d");
    }
  }
  if (p.secure && (p.log2_q() > he_standard_max_log_q(p.d) || p.sigma < 3.19)) {
    return invalid_argument_error(
        "hintless `" + name + "`: log2 q = " + std::to_string(p.log2_q()) +
        " is outside the HE standard's 128-bit row for d = " + std::to_string(p.d));
  }
  // 3 <= t <= 4, and the packing's lazy sums 8q + t (q - 1)^2 below 2^58 (kernels.h). The second
  // check is implied by q < 2^28 and t <= 4 today; it is spelled out so that widening either
  // bound cannot silently overflow the kernels' 64-bit lanes.
  if (p.gadget_digits * p.gadget_log_base < 56 || p.gadget_log_base > 20 || p.gadget_digits < 3 ||
      p.gadget_digits > 4) {
    return invalid_argument_error("hintless `" + name + "`: z^t does not cover q within t <= 4");
  }
  for (std::uint64_t q : {p.q_a, p.q_b}) {
    const unsigned __int128 sum =
        static_cast<unsigned __int128>(p.gadget_digits) * (q - 1) * (q - 1) + 8 * q;
    if (sum >= (static_cast<unsigned __int128>(1) << 58)) {
      return invalid_argument_error("hintless `" + name + "`: t q^2 + 8q reaches 2^58");
    }
  }
  // 14-bit entries: the first-layer sums (kernels.h) and kMaxColumns assume 14 bits.
  if (p.response_b_bits <= p.p_bits || p.response_b_bits >= 28 || p.p_bits != 14) {
    return invalid_argument_error("hintless `" + name + "`: need p = 2^14 < q~b < q~a");
  }
  return Status();
}

Result<HintlessParams> find_hintless_params(std::string_view name, bool allow_insecure) {
  PRIVSEARCH_ASSIGN_OR_RETURN(HintlessParams p, find_param_row(hintless_param_table(), name,
                                                               allow_insecure, "hintless PIR"));
  PRIVSEARCH_RETURN_IF_ERROR(check_hintless_params(p));
  return p;
}

Result<HintlessParams> hintless_params_by_id(std::uint32_t id, bool allow_insecure) {
  for (const auto& p : kTable) {
    if (p.id == id) return find_hintless_params(p.name, allow_insecure);
  }
  return failed_precondition_error("unknown hintless PIR params id " + std::to_string(id));
}

double hintless_decoding_failure_log2(const HintlessParams& p, std::size_t columns,
                                      std::size_t outputs) {
  const double pi = 3.14159265358979323846;
  const double d = static_cast<double>(p.d);
  const double q = std::exp2(p.log2_q());
  const double qb = std::exp2(p.response_b_bits);
  const double qa = static_cast<double>(p.q_a);
  const double pm = static_cast<double>(p.p());
  const double q_mod_p = static_cast<double>((p.q_a * p.q_b) % p.p());  // q < 2^56: exact
  const double qb_mod_p = std::fmod(qb, pm);
  const double tau = qb / (2 * pm) - qb_mod_p - 0.5 * (2 + qb_mod_p + (qb / q) * q_mod_p);
  if (tau <= 0) return 0.0;
  const double width2 = p.sigma * p.sigma * 2 * pi;  // s^2 = 2 pi sigma^2
  const double z = std::exp2(p.gadget_log_base);
  const double t = p.gadget_digits;
  const double a_round = (qb / qa) * (qb / qa) * d * width2 / 4;
  const double db_error = static_cast<double>(columns) * (pm - 1) * (pm - 1) * width2;
  const double packing = (d * d - 1) * t * d * z * z * width2 / 12;
  const double s2 = a_round + (qb / q) * (qb / q) * (db_error + packing);
  const double union_bits = std::log2(2 * d * static_cast<double>(outputs));
  return std::min(0.0, union_bits - pi * tau * tau / (s2 * std::log(2.0)));
}

}  // namespace privsearch::pir::hintless
