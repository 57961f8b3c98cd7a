// The one summary statistic of privsearch: every median, p95 and p99 that a benchmark, an
// evaluation or an audit reports comes from `describe`, so two figures of the same name are
// always computed the same way.
//
// Quantile q of n sorted values: linear interpolation between the closest ranks,
//   pos = q (n - 1), value = v[floor(pos)] + (pos - floor(pos)) (v[floor(pos) + 1] - v[floor(pos)])
// (Hyndman and Fan's definition 7, NumPy's default), so the median of an even count is the mean
// of the middle two. `std` is the population standard deviation. Empty input: all zeros.
// Thread safety: pure function.
#pragma once

#include <cstddef>
#include <vector>

namespace privsearch::eval {

struct Distribution {
  double mean = 0, std = 0, p01 = 0, p05 = 0, median = 0, p95 = 0, p99 = 0, min = 0, max = 0;
  std::size_t count = 0;
};

Distribution describe(std::vector<double> values);

// Quantile q in [0, 1] of `sorted` (ascending, non-empty) by the rule above.
double sorted_quantile(const std::vector<double>& sorted, double q);

}  // namespace privsearch::eval
