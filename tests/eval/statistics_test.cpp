// The one statistics helper: known answers computed by hand from its definition (linear
// interpolation between closest ranks), including the even-count median that the former
// nearest-rank formulas got wrong.
#include "eval/statistics.h"

#include <gtest/gtest.h>

#include <cmath>

namespace privsearch::eval {
namespace {

TEST(Statistics, QuantilesOfZeroToHundredAreTheValuesThemselves) {
  std::vector<double> v;
  for (int i = 100; i >= 0; --i) v.push_back(i);  // unsorted input
  const auto d = describe(v);
  EXPECT_EQ(d.count, 101u);
  EXPECT_DOUBLE_EQ(d.median, 50);
  EXPECT_DOUBLE_EQ(d.p05, 5);
  EXPECT_DOUBLE_EQ(d.p95, 95);
  EXPECT_DOUBLE_EQ(d.p99, 99);
  EXPECT_DOUBLE_EQ(d.min, 0);
  EXPECT_DOUBLE_EQ(d.max, 100);
  EXPECT_DOUBLE_EQ(d.mean, 50);
}

TEST(Statistics, EvenCountInterpolates) {
  // 1..10: pos(0.5) = 4.5 -> (5 + 6) / 2; pos(0.95) = 8.55 -> 9 + 0.55; pos(0.99) = 8.91.
  const auto d = describe({4, 1, 3, 2, 10, 9, 8, 7, 6, 5});
  EXPECT_DOUBLE_EQ(d.median, 5.5);
  EXPECT_NEAR(d.p95, 9.55, 1e-12);
  EXPECT_NEAR(d.p99, 9.91, 1e-12);
  EXPECT_NEAR(d.std, std::sqrt(8.25), 1e-12);  // population variance of 1..10
}

TEST(Statistics, SingleValueAndEmpty) {
  const auto one = describe({7.5});
  EXPECT_DOUBLE_EQ(one.median, 7.5);
  EXPECT_DOUBLE_EQ(one.p99, 7.5);
  EXPECT_DOUBLE_EQ(one.std, 0);
  const auto none = describe({});
  EXPECT_EQ(none.count, 0u);
  EXPECT_DOUBLE_EQ(none.median, 0);
}

}  // namespace
}  // namespace privsearch::eval
