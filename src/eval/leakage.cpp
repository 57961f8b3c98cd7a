#include "eval/leakage.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace privsearch::eval {

Vec unit(Vec v) {
  double n = 0;
  for (double x : v) n += x * x;
  n = std::sqrt(n);
  if (n > 0) {
    for (double& x : v) x /= n;
  }
  return v;
}

double cosine(std::span<const double> a, std::span<const double> b) {
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ab += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0.0;
}

namespace {
std::vector<double> unit_rows(std::span<const double> rows, std::size_t k, std::size_t d) {
  std::vector<double> out(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(k * d));
  for (std::size_t r = 0; r < k; ++r) {
    double n = 0;
    for (std::size_t j = 0; j < d; ++j) n += out[r * d + j] * out[r * d + j];
    n = std::sqrt(n);
    if (n > 0) {
      for (std::size_t j = 0; j < d; ++j) out[r * d + j] /= n;
    }
  }
  return out;
}
}  // namespace

Vec centroid_estimate(std::span<const double> rows, std::size_t k, std::size_t d) {
  const auto u = unit_rows(rows, k, d);
  Vec c(d, 0.0);
  for (std::size_t r = 0; r < k; ++r) {
    for (std::size_t j = 0; j < d; ++j) c[j] += u[r * d + j];
  }
  return unit(std::move(c));
}

Vec log_rank_estimate(std::span<const double> rows, std::size_t k, std::size_t d) {
  const auto u = unit_rows(rows, k, d);
  Vec c(d, 0.0);
  for (std::size_t r = 0; r < k; ++r) {
    const double w = 1.0 / std::log2(static_cast<double>(r) + 2.0);
    for (std::size_t j = 0; j < d; ++j) c[j] += w * u[r * d + j];
  }
  return unit(std::move(c));
}

Vec ridge_rank_estimate(std::span<const double> rows, std::size_t k, std::size_t d) {
  const auto u = unit_rows(rows, k, d);
  const Vec prior = log_rank_estimate(rows, k, d);
  Vec mean(d, 0.0);
  for (std::size_t r = 0; r < k; ++r) {
    for (std::size_t j = 0; j < d; ++j) mean[j] += u[r * d + j] / static_cast<double>(k);
  }
  std::vector<double> xc(k * d);
  for (std::size_t r = 0; r < k; ++r) {
    for (std::size_t j = 0; j < d; ++j) xc[r * d + j] = u[r * d + j] - mean[j];
  }
  std::vector<double> y(k);
  for (std::size_t r = 0; r < k; ++r) {
    y[r] = inverse_normal_cdf((static_cast<double>(k - r) - 0.5) / static_cast<double>(k));
  }
  const double ym = std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(k);
  for (double& v : y) v -= ym;
  std::vector<double> g(k * k);
  double trace = 0;
  for (std::size_t a = 0; a < k; ++a) {
    for (std::size_t b = 0; b <= a; ++b) {
      double s = 0;
      for (std::size_t j = 0; j < d; ++j) s += xc[a * d + j] * xc[b * d + j];
      g[a * k + b] = g[b * k + a] = s;
    }
    trace += g[a * k + a];
  }
  const double alpha = std::max(0.10 * trace / static_cast<double>(k), 1e-12);
  for (std::size_t a = 0; a < k; ++a) g[a * k + a] += alpha;
  std::vector<double> rhs(k);
  for (std::size_t r = 0; r < k; ++r) {
    double s = 0;
    for (std::size_t j = 0; j < d; ++j) s += xc[r * d + j] * prior[j];
    rhs[r] = y[r] - s;
  }
  if (!solve_spd(g, rhs, k)) return prior;
  Vec q = prior;
  for (std::size_t r = 0; r < k; ++r) {
    for (std::size_t j = 0; j < d; ++j) q[j] += xc[r * d + j] * rhs[r];
  }
  return unit(std::move(q));
}

double inverse_normal_cdf(double p) {
  // Acklam's algorithm: rational approximations in the central and tail regions.
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                 -2.759285104469687e+02, 1.383577518672690e+02,
                                 -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                 -1.556989798598866e+02, 6.680131188771972e+01,
                                 -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                 -2.400758277161838e+00, -2.549732539343734e+00,
                                 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                 2.445134137142996e+00, 3.754408661907416e+00};
  p = std::clamp(p, 1e-300, 1.0 - 1e-16);
  const double plow = 0.02425, phigh = 1 - plow;
  if (p < plow) {
    const double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > phigh) {
    const double q = std::sqrt(-2 * std::log(1 - p));
    return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  const double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

bool solve_spd(std::vector<double> a, std::vector<double>& b, std::size_t n) {
  // In-place Cholesky A = L L^T (lower triangle of `a`), then two triangular solves.
  for (std::size_t j = 0; j < n; ++j) {
    double s = a[j * n + j];
    for (std::size_t k = 0; k < j; ++k) s -= a[j * n + k] * a[j * n + k];
    if (s <= 0) return false;
    const double l = std::sqrt(s);
    a[j * n + j] = l;
    for (std::size_t i = j + 1; i < n; ++i) {
      double t = a[i * n + j];
      for (std::size_t k = 0; k < j; ++k) t -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = t / l;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    double t = b[i];
    for (std::size_t k = 0; k < i; ++k) t -= a[i * n + k] * b[k];
    b[i] = t / a[i * n + i];
  }
  for (std::size_t i = n; i-- > 0;) {
    double t = b[i];
    for (std::size_t k = i + 1; k < n; ++k) t -= a[k * n + i] * b[k];
    b[i] = t / a[i * n + i];
  }
  return true;
}

double roc_auc(std::span<const double> pos, std::span<const double> neg) {
  if (pos.empty() || neg.empty()) return 0.5;
  // Mann-Whitney U by merged ranks with average ranks for ties.
  std::vector<std::pair<double, int>> all;
  for (double v : pos) all.push_back({v, 1});
  for (double v : neg) all.push_back({v, 0});
  std::sort(all.begin(), all.end());
  double rank_sum = 0;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    const double avg = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (std::size_t t = i; t < j; ++t) {
      if (all[t].second == 1) rank_sum += avg;
    }
    i = j;
  }
  const double np = static_cast<double>(pos.size()), nn = static_cast<double>(neg.size());
  return (rank_sum - np * (np + 1) / 2.0) / (np * nn);
}

double tpr_at_fpr(std::span<const double> pos, std::span<const double> neg, double max_fpr) {
  if (pos.empty() || neg.empty()) return 0.0;
  std::vector<double> n(neg.begin(), neg.end());
  std::sort(n.begin(), n.end(), std::greater<>());
  // Threshold t: predict positive when score > t. FPR = #(neg > t) / |neg|.
  const std::size_t allowed =
      static_cast<std::size_t>(std::floor(max_fpr * static_cast<double>(n.size())));
  const double threshold = allowed < n.size() ? n[allowed] : -INFINITY;
  std::size_t tp = 0;
  for (double v : pos) tp += v > threshold ? 1 : 0;
  return static_cast<double>(tp) / static_cast<double>(pos.size());
}

}  // namespace privsearch::eval
