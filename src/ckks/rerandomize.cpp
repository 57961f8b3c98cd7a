#include "ckks/rerandomize.h"

#include <fmt/format.h>

#include <cmath>
#include <numbers>

#include "ckks/internal/poly_util.h"
#include "core/secure_buffer.h"
#include "ring/sampler.h"

namespace privsearch::ckks {

namespace {
constexpr double kSlotSigmas = 5.0;   // worst slot of n/2 at 5 deviations (as compact.h)
constexpr double kCoeffSigmas = 8.0;  // worst coefficient of n at 8 deviations (P < 2^-40)
constexpr double kSmallSigma = 3.2;   // e0, e1: the usual RLWE error width

// One standard normal deviate from two 53-bit uniforms (Box-Muller, cosine branch). The 2^-53
// granularity of the uniforms bounds the tail at about 8.6 deviations, beyond kCoeffSigmas.
double standard_normal(Prng& prng) {
  const double u1 = (static_cast<double>(prng.next_u64() >> 11) + 0.5) * 0x1p-53;
  const double u2 = static_cast<double>(prng.next_u64() >> 11) * 0x1p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

void sample_rounded_gaussian(Prng& prng, double sigma, SecureVector<std::int64_t>& out) {
  for (auto& x : out.span()) x = std::llround(sigma * standard_normal(prng));
}

ring::RnsPoly to_rows_ntt(const Params& params, const std::vector<std::size_t>& rows,
                          const SecureVector<std::int64_t>& v) {
  ring::RnsPoly out(params.n(), rows.size(), false);
  ring::signed_to_rns(v.span(), moduli_for_rows(params, rows), out);
  to_ntt(params, rows, out);
  return out;
}
}  // namespace

Result<FloodingPlan> plan_flooding(const Params& params, std::size_t level, double scale,
                                   double value_bound, int security_bits, double noise_l2_log2,
                                   double message_coeff_bound) {
  if (security_bits < 1 || security_bits > 128) {
    return invalid_argument_error(
        fmt::format("flooding security {} bits outside [1, 128]", security_bits));
  }
  if (!std::isfinite(noise_l2_log2) || !(scale >= 1) || !(value_bound > 0) ||
      !std::isfinite(value_bound) || level > params.max_level() || !(message_coeff_bound >= 0) ||
      !std::isfinite(message_coeff_bound)) {
    return invalid_argument_error(
        "flooding plan: noise bound, scale, value bound or level out of range");
  }
  const double n = static_cast<double>(params.n());
  FloodingPlan plan;
  plan.security_bits = security_bits;
  plan.noise_l2_log2 = noise_l2_log2;
  plan.level = level;
  plan.sigma_log2 = noise_l2_log2 + security_bits - 0.5 * std::log2(2.0 * std::numbers::pi);
  const double slot_factor_log2 = std::log2(kSlotSigmas * std::sqrt(n / 2.0));
  plan.precision_bits = std::log2(value_bound * scale) - plan.sigma_log2 - slot_factor_log2;
  // Fit: message plus flood below Q_l / 4 in every coefficient: 8 sigma_f <= Q_l/4 - |m| scale.
  const double room = std::exp2(params.log_q_at_level(level) - 2.0) - message_coeff_bound * scale;
  const double max_sigma_log2 = room > 0 ? std::log2(room / kCoeffSigmas) : -1e9;
  const double fit_slack = max_sigma_log2 - plan.sigma_log2;  // >= 0: fits
  const double precision_slack = plan.precision_bits - 1.0;   // >= 0: one bit survives
  if (fit_slack < 0 || precision_slack < 0) {
    const double max_lambda = std::floor(security_bits + std::min(fit_slack, precision_slack));
    return out_of_range_error(fmt::format(
        "noise flooding at {} bits of statistical security does not fit {} at level {} "
        "(values up to {:.3g} at scale 2^{:.1f}, flood sigma 2^{:.1f}, predicted precision "
        "{:.1f} bits); at most {} bits fit",
        security_bits, params.name(), level, value_bound, std::log2(scale), plan.sigma_log2,
        plan.precision_bits, static_cast<int>(std::max(0.0, max_lambda))));
  }
  return plan;
}

int max_flooding_security_bits(const Params& params, std::size_t level, double scale,
                               double value_bound, double noise_l2_log2, double min_precision_bits,
                               double message_coeff_bound) {
  for (int lambda = 128; lambda >= 1; --lambda) {
    const auto plan = plan_flooding(params, level, scale, value_bound, lambda, noise_l2_log2,
                                    message_coeff_bound);
    if (plan.ok() && plan.value().precision_bits >= min_precision_bits) return lambda;
  }
  return 0;
}

Result<Ciphertext> rerandomize(const Params& params, const Ciphertext& ct, const PublicKey& pk,
                               const FloodingPlan& plan, Prng& prng) {
  if (ct.params_id() != params.id() || pk.params_id() != params.id()) {
    return failed_precondition_error(
        "re-randomization: ciphertext or public key made for other params");
  }
  if (ct.level() != plan.level) {
    return failed_precondition_error(fmt::format(
        "re-randomization planned for level {}, ciphertext at level {}", plan.level, ct.level()));
  }
  if (!ct.c0().is_ntt() || !ct.c1().is_ntt()) {
    return failed_precondition_error("re-randomization needs NTT-form ciphertexts");
  }
  const std::size_t n = params.n();
  const auto rows = key_rows(params, ct.level(), false);
  const auto moduli = moduli_for_rows(params, rows);

  SecureVector<std::int64_t> u(n), e0(n), e1(n), flood(n);
  ring::sample_ternary(prng, u);
  sample_rounded_gaussian(prng, kSmallSigma, e0);
  sample_rounded_gaussian(prng, kSmallSigma, e1);
  sample_rounded_gaussian(prng, std::exp2(plan.sigma_log2), flood);
  for (std::size_t j = 0; j < n; ++j) e0.span()[j] += flood.span()[j];
  const auto u_ntt = to_rows_ntt(params, rows, u);
  const auto e0_ntt = to_rows_ntt(params, rows, e0);
  const auto e1_ntt = to_rows_ntt(params, rows, e1);

  Ciphertext out = ct;
  auto& c0 = out.mutable_c0();
  auto& c1 = out.mutable_c1();
  // pk rows 0..level are q_0..q_level of the key basis, in the same NTT order.
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& q = moduli[i];
    ring::mul_add_row(pk.pk0().row(i), u_ntt.row(i), c0.row(i), n, q);
    ring::add_row(c0.row(i), e0_ntt.row(i), c0.row(i), n, q);
    ring::mul_add_row(pk.pk1().row(i), u_ntt.row(i), c1.row(i), n, q);
    ring::add_row(c1.row(i), e1_ntt.row(i), c1.row(i), n, q);
  }
  return out;
}

}  // namespace privsearch::ckks
