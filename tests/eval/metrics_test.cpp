#include "eval/metrics.h"

#include <gtest/gtest.h>

#include <cmath>

namespace privsearch::eval {
namespace {

TEST(Metrics, PerfectRankingScoresOne) {
  const std::map<std::string, int> judged = {{"a", 2}, {"b", 1}};
  const auto m = score_ranking({"a", "b", "c"}, judged);
  EXPECT_DOUBLE_EQ(m.ndcg_at_10, 1.0);
  EXPECT_DOUBLE_EQ(m.mrr_at_10, 1.0);
  EXPECT_DOUBLE_EQ(m.recall_at_10, 1.0);
  EXPECT_DOUBLE_EQ(m.hit_at_1, 1.0);
}

TEST(Metrics, GradedNdcgByHand) {
  // ranking c, b, a with grades a=2, b=1: DCG = 0/1 + 1/log2(3) + 2/log2(4) = 0.6309 + 1.0;
  // IDCG = 2/1 + 1/log2(3) = 2.6309.
  const std::map<std::string, int> judged = {{"a", 2}, {"b", 1}};
  const auto m = score_ranking({"c", "b", "a"}, judged);
  const double dcg = 1.0 / std::log2(3.0) + 2.0 / 2.0;
  const double idcg = 2.0 + 1.0 / std::log2(3.0);
  EXPECT_NEAR(m.ndcg_at_10, dcg / idcg, 1e-12);
  EXPECT_DOUBLE_EQ(m.mrr_at_10, 0.5);
  EXPECT_DOUBLE_EQ(m.hit_at_1, 0.0);
  EXPECT_DOUBLE_EQ(m.hit_at_10, 1.0);
}

TEST(Metrics, CutoffsAndZeroGradesAreRespected) {
  std::vector<std::string> ranking;
  for (int i = 0; i < 20; ++i) ranking.push_back("x" + std::to_string(i));
  ranking.push_back("rel");
  const std::map<std::string, int> judged = {{"rel", 1}, {"x0", 0}};
  const auto m = score_ranking(ranking, judged);
  EXPECT_DOUBLE_EQ(m.ndcg_at_10, 0.0);
  EXPECT_DOUBLE_EQ(m.mrr_at_10, 0.0);
  EXPECT_DOUBLE_EQ(m.recall_at_10, 0.0);
  EXPECT_DOUBLE_EQ(m.recall_at_100, 1.0);
  EXPECT_DOUBLE_EQ(m.hit_at_10, 0.0);
}

TEST(Metrics, NoRelevantDocumentsGiveZero) {
  const auto m = score_ranking({"a"}, {{"a", 0}});
  EXPECT_DOUBLE_EQ(m.ndcg_at_10, 0.0);
  EXPECT_DOUBLE_EQ(m.recall_at_10, 0.0);
}

TEST(Bootstrap, IsSeededAndBracketsTheMean) {
  std::vector<double> v;
  for (int i = 0; i < 200; ++i) v.push_back((i % 7) / 7.0);
  const auto a = bootstrap_mean(v, 2000, 42), b = bootstrap_mean(v, 2000, 42);
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
  EXPECT_LT(a.low, a.mean);
  EXPECT_GT(a.high, a.mean);
  const auto c = bootstrap_mean(v, 2000, 43);
  EXPECT_NE(a.low, c.low);
  // The 95% percentile interval is about +-1.96 standard errors of the mean.
  double mean = 0, var = 0;
  for (double x : v) mean += x / static_cast<double>(v.size());
  for (double x : v) var += (x - mean) * (x - mean) / static_cast<double>(v.size());
  const double se = std::sqrt(var / static_cast<double>(v.size()));
  EXPECT_NEAR(a.high - a.low, 2 * 1.96 * se, 0.1 * 2 * 1.96 * se);
}

TEST(Bootstrap, PairedDifferenceOfIdenticalSystemsIsZero) {
  std::vector<double> v = {0.1, 0.5, 0.9, 0.3};
  const auto d = paired_bootstrap_difference(v, v, 1000, 1);
  EXPECT_EQ(d.mean, 0.0);
  EXPECT_EQ(d.low, 0.0);
  EXPECT_EQ(d.high, 0.0);
}

}  // namespace
}  // namespace privsearch::eval
