#include "rerank/flooding.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "rerank/packed.h"

namespace privsearch::rerank {

Result<double> fast_kernel_noise_l2_log2(const KernelLayout& layout, const ckks::Params& params) {
  if (layout.kernel() != Kernel::kFast) {
    return failed_precondition_error("noise flooding is implemented for the fast kernel only");
  }
  if (params.max_level() < 2) {
    return failed_precondition_error(
        "noise flooding needs params with at least three data primes (the fast kernel must "
        "rescale its mask); " +
        params.name() + " has " + std::to_string(params.num_q()));
  }
  const double n = static_cast<double>(params.n());
  const double ones = static_cast<double>(std::min(layout.k(), layout.capacity()));
  const double rounding_sq = n / 12.0 + n * n / 18.0;
  const double level1_sq = 16.0 * rounding_sq;
  const double mask_sq = level1_sq * 2.0 * ones / n;
  return 1.0 + 0.5 * std::log2(rounding_sq + mask_sq);
}

Result<double> packed_kernel_noise_l2_log2(const KernelLayout& layout, const ckks::Params& params,
                                           double max_row_norm) {
  if (layout.kernel() != Kernel::kPacked) {
    return failed_precondition_error("packed_kernel_noise_l2_log2 needs a packed layout");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const int rho, packed_row_log_scale(params, max_row_norm));
  const double rows = std::ldexp(max_row_norm, rho);         // 2^rho ||x||
  const double query = std::ldexp(1.0, params.log_scale());  // 2^24 |z|
  const double uniform_sd = 1.0 / std::sqrt(12.0);           // rounding to integers
  const double per_score = 6.0 * (3.24 * rows + uniform_sd * query + uniform_sd * rows) + 8192.0;
  const double scores = static_cast<double>(std::min(layout.k(), layout.capacity()));
  return std::log2(per_score * std::sqrt(scores));
}

Result<ckks::FloodingPlan> plan_packed_flooding(const ckks::Params& params,
                                                const KernelLayout& layout, int security_bits,
                                                double value_bound, double max_row_norm) {
  if (security_bits < 1 || security_bits > 128 || !(value_bound > 0) || !(max_row_norm > 0)) {
    return invalid_argument_error("flooding: lambda in [1, 128] and positive bounds required");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const double b2,
                              packed_kernel_noise_l2_log2(layout, params, max_row_norm));
  PRIVSEARCH_ASSIGN_OR_RETURN(const int rho, packed_row_log_scale(params, max_row_norm));
  const double scale_log2 = params.log_scale() + rho;
  const double half_q_log2 = std::log2(static_cast<double>(params.q_moduli()[0].value())) - 1;
  const double sigma_log2 = b2 + security_bits - 0.5 * std::log2(2.0 * M_PI);
  // value_bound 2^scale + 8 sigma <= q / 2, and at least one bit: 5 sigma <= value_bound 2^scale.
  const double room = std::log2(std::exp2(half_q_log2) - value_bound * std::exp2(scale_log2));
  const double precision = std::log2(value_bound) + scale_log2 - sigma_log2 - std::log2(5.0);
  if (!(sigma_log2 + 3 <= room) || precision < 1) {
    const double fit =
        std::min(room - 3, std::log2(value_bound) + scale_log2 - std::log2(5.0) - 1) -
        (b2 - 0.5 * std::log2(2.0 * M_PI));
    return out_of_range_error(fmt::format(
        "flooding at lambda = {} does not fit the packed kernel's modulus next to the scores; "
        "the largest that fits is {}",
        security_bits, std::isfinite(fit) ? std::max(0, static_cast<int>(std::floor(fit))) : 0));
  }
  ckks::FloodingPlan plan;
  plan.security_bits = security_bits;
  plan.noise_l2_log2 = b2;
  plan.sigma_log2 = sigma_log2;
  plan.precision_bits = precision;
  plan.level = 0;
  return plan;
}

}  // namespace privsearch::rerank
