#include "eval/metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/check.h"
#include "core/csprng.h"

namespace privsearch::eval {

double ndcg_at(const std::vector<std::string>& ranking, const std::map<std::string, int>& judged,
               std::size_t k) {
  double dcg = 0;
  for (std::size_t i = 0; i < std::min(k, ranking.size()); ++i) {
    const auto it = judged.find(ranking[i]);
    if (it != judged.end() && it->second > 0)
      dcg += it->second / std::log2(static_cast<double>(i) + 2);
  }
  std::vector<int> grades;
  for (const auto& [doc, g] : judged) {
    if (g > 0) grades.push_back(g);
  }
  std::sort(grades.rbegin(), grades.rend());
  double idcg = 0;
  for (std::size_t i = 0; i < std::min(k, grades.size()); ++i) {
    idcg += grades[i] / std::log2(static_cast<double>(i) + 2);
  }
  return idcg > 0 ? dcg / idcg : 0.0;
}

QueryMetrics score_ranking(const std::vector<std::string>& ranking,
                           const std::map<std::string, int>& judged) {
  QueryMetrics m;
  m.ndcg_at_10 = ndcg_at(ranking, judged, 10);
  std::size_t relevant = 0;
  for (const auto& [doc, g] : judged) relevant += g > 0 ? 1 : 0;
  std::size_t found10 = 0, found100 = 0;
  for (std::size_t i = 0; i < std::min<std::size_t>(100, ranking.size()); ++i) {
    const auto it = judged.find(ranking[i]);
    if (it == judged.end() || it->second <= 0) continue;
    if (i < 10) {
      ++found10;
      if (m.mrr_at_10 == 0) m.mrr_at_10 = 1.0 / static_cast<double>(i + 1);
      m.hit_at_10 = 1;
      if (i == 0) m.hit_at_1 = 1;
    }
    ++found100;
  }
  if (relevant > 0) {
    m.recall_at_10 = static_cast<double>(found10) / static_cast<double>(relevant);
    m.recall_at_100 = static_cast<double>(found100) / static_cast<double>(relevant);
  }
  return m;
}

namespace {
Interval percentile_interval(std::vector<double>& means, double mean) {
  std::sort(means.begin(), means.end());
  auto pick = [&](double q) {
    const double pos = q * static_cast<double>(means.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const auto hi = std::min(lo + 1, means.size() - 1);
    return means[lo] + (pos - static_cast<double>(lo)) * (means[hi] - means[lo]);
  };
  return {mean, pick(0.025), pick(0.975)};
}

Interval bootstrap(const std::vector<double>& v, std::size_t resamples, std::uint64_t seed) {
  PRIVSEARCH_CHECK(!v.empty() && resamples > 0, "bootstrap needs values and resamples");
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  // Public randomness: the resampling indices of an evaluation, derived from a named seed so
  // that reported intervals are reproducible.
  Seed s{};
  for (int i = 0; i < 8; ++i)
    s[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(seed >> (8 * i));
  Prng prng = Prng::from_seed(s, 0xB007);
  std::vector<double> means(resamples);
  for (auto& m : means) {
    double sum = 0;
    for (std::size_t i = 0; i < v.size(); ++i) sum += v[prng.uniform_below(v.size())];
    m = sum / static_cast<double>(v.size());
  }
  return percentile_interval(means, mean);
}
}  // namespace

Interval bootstrap_mean(const std::vector<double>& values, std::size_t resamples,
                        std::uint64_t seed) {
  return bootstrap(values, resamples, seed);
}

Interval paired_bootstrap_difference(const std::vector<double>& a, const std::vector<double>& b,
                                     std::size_t resamples, std::uint64_t seed) {
  PRIVSEARCH_CHECK(a.size() == b.size(), "paired bootstrap needs equal sizes");
  std::vector<double> d(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) d[i] = a[i] - b[i];
  return bootstrap(d, resamples, seed);
}

std::string equivalence_decision(const Interval& d, double margin) {
  if (d.low >= -margin && d.high <= margin) return "equivalent";
  if (d.high < -margin) return "inferior";
  if (d.low >= -margin) return "non-inferior";
  return "inconclusive";
}

std::vector<std::size_t> top_indices(const std::vector<double>& s, std::size_t k) {
  std::vector<std::size_t> idx(s.size());
  std::iota(idx.begin(), idx.end(), 0);
  k = std::min(k, idx.size());
  std::partial_sort(
      idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(),
      [&](std::size_t a, std::size_t b) { return s[a] > s[b] || (s[a] == s[b] && a < b); });
  idx.resize(k);
  return idx;
}

}  // namespace privsearch::eval
