#include "ring/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace privsearch::ring {
namespace {

TEST(Sampler, TernaryIsBalancedOverMinusOneZeroOne) {
  Prng prng = Prng::from_seed(Seed{}, 51);
  SecureVector<std::int64_t> v(30000);
  sample_ternary(prng, v);
  int counts[3] = {0, 0, 0};
  for (std::size_t i = 0; i < v.size(); ++i) {
    ASSERT_GE(v[i], -1);
    ASSERT_LE(v[i], 1);
    ++counts[v[i] + 1];
  }
  for (int c : counts) EXPECT_NEAR(c, 10000, 400);
}

TEST(Sampler, CenteredBinomialHasTheStatedVariance) {
  Prng prng = Prng::from_seed(Seed{}, 52);
  SecureVector<std::int64_t> v(100000);
  sample_cbd(prng, 21, v);
  double sum = 0, sq = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    ASSERT_LE(std::abs(v[i]), 21);
    sum += static_cast<double>(v[i]);
    sq += static_cast<double>(v[i] * v[i]);
  }
  const double mean = sum / static_cast<double>(v.size());
  const double var = sq / static_cast<double>(v.size()) - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.05);
  EXPECT_NEAR(var, 10.5, 0.3);  // eta / 2, sigma = 3.24
}

TEST(Sampler, UniformRowsAreBelowTheirModuliAndSeedDeterministic) {
  const Modulus mods[] = {*Modulus::create(97), *Modulus::create(1099511480321ULL)};
  RnsPoly a(256, 2, true), b(256, 2, true);
  Prng p1 = Prng::from_seed(Seed{}, 53), p2 = Prng::from_seed(Seed{}, 53);
  sample_uniform_rows(p1, mods, a);
  sample_uniform_rows(p2, mods, b);
  EXPECT_EQ(a, b);
  for (std::size_t i = 0; i < 256; ++i) {
    EXPECT_LT(a.row(0)[i], 97u);
    EXPECT_LT(a.row(1)[i], 1099511480321ULL);
  }
}

TEST(Sampler, SmallToRnsMapsNegativesToTheTopOfTheRange) {
  const Modulus mods[] = {*Modulus::create(97), *Modulus::create(101)};
  const std::int64_t small[] = {-1, 0, 1, -21};
  RnsPoly out(4, 2, false);
  small_to_rns(small, mods, out);
  EXPECT_EQ(out.row(0)[0], 96u);
  EXPECT_EQ(out.row(1)[0], 100u);
  EXPECT_EQ(out.row(0)[2], 1u);
  EXPECT_EQ(out.row(1)[3], 80u);
}

TEST(Sampler, SignedToRnsReducesValuesLargerThanTheModuli) {
  const std::vector<Modulus> moduli = {*Modulus::create(1099511627689ULL), *Modulus::create(65537)};
  const std::vector<std::int64_t> v = {0,
                                       1,
                                       -1,
                                       65537,
                                       -65537,
                                       (std::int64_t{1} << 62) + 12345,
                                       -(std::int64_t{1} << 62) - 999,
                                       1099511627689LL * 3 + 7};
  RnsPoly out(v.size(), moduli.size(), true);
  signed_to_rns(v, moduli, out);
  EXPECT_FALSE(out.is_ntt());
  for (std::size_t i = 0; i < moduli.size(); ++i) {
    const auto q = static_cast<__int128>(moduli[i].value());
    for (std::size_t j = 0; j < v.size(); ++j) {
      const auto want = static_cast<std::uint64_t>(((v[j] % q) + q) % q);
      EXPECT_EQ(out.row(i)[j], want) << "value " << v[j] << " mod " << moduli[i].value();
    }
  }
}

}  // namespace
}  // namespace privsearch::ring
