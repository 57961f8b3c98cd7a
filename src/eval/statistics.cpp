#include "eval/statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace privsearch::eval {

double sorted_quantile(const std::vector<double>& v, double q) {
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

Distribution describe(std::vector<double> v) {
  Distribution d;
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  d.count = v.size();
  d.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double ss = 0;
  for (const double x : v) ss += (x - d.mean) * (x - d.mean);
  d.std = std::sqrt(ss / static_cast<double>(v.size()));
  d.p01 = sorted_quantile(v, 0.01);
  d.p05 = sorted_quantile(v, 0.05);
  d.median = sorted_quantile(v, 0.5);
  d.p95 = sorted_quantile(v, 0.95);
  d.p99 = sorted_quantile(v, 0.99);
  d.min = v.front();
  d.max = v.back();
  return d;
}

}  // namespace privsearch::eval
