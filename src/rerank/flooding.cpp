#include "rerank/flooding.h"

#include <algorithm>
#include <cmath>

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

}  // namespace privsearch::rerank
