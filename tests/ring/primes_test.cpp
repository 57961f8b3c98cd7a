#include "ring/primes.h"

#include <gtest/gtest.h>

#include "ring/modulus.h"

namespace privsearch::ring {
namespace {

TEST(Primes, MillerRabinAgreesWithTrialDivision) {
  auto slow = [](std::uint64_t x) {
    if (x < 2) return false;
    for (std::uint64_t d = 2; d * d <= x; ++d) {
      if (x % d == 0) return false;
    }
    return true;
  };
  for (std::uint64_t x = 0; x < 5000; ++x) EXPECT_EQ(is_prime(x), slow(x)) << x;
  EXPECT_TRUE(is_prime(1152921504606846883ULL));  // 2^60 - 93
  EXPECT_FALSE(is_prime(3215031751ULL));          // strong pseudoprime to bases 2, 3, 5, 7
  EXPECT_FALSE(is_prime(1152921504606846883ULL * 1 + 2));
}

TEST(Primes, SealRuleReproducesThePapersPrimes) {
  // hybrid-search-reference.md, Table 3: bits {60, 40, 60} at n = 8192.
  const int bits[] = {60, 40, 60};
  const auto primes = *ntt_primes_for_bit_sizes(8192, bits);
  ASSERT_EQ(primes.size(), 3u);
  EXPECT_EQ(primes[0], 1152921504606748673ULL);
  EXPECT_EQ(primes[1], 1099511480321ULL);
  EXPECT_EQ(primes[2], 1152921504606830593ULL);
}

TEST(Primes, LargestNttPrimesAreDecreasingAndFriendly) {
  const auto primes = *largest_ntt_primes(50, 8192, 4);
  for (std::size_t i = 0; i < primes.size(); ++i) {
    EXPECT_TRUE(is_prime(primes[i]));
    EXPECT_EQ(primes[i] % 16384, 1u);
    EXPECT_LT(primes[i], 1ULL << 50);
    if (i > 0) {
      EXPECT_LT(primes[i], primes[i - 1]);
    }
  }
}

TEST(Primes, TooManyRequestedIsAnError) {
  EXPECT_EQ(largest_ntt_primes(20, 8192, 1000).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(largest_ntt_primes(70, 8192, 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(largest_ntt_primes(40, 3000, 1).status().code(), StatusCode::kInvalidArgument);
}

TEST(Primes, PrimitiveRootHasExactOrder) {
  const std::uint64_t q = 1099511480321ULL;
  const auto psi = *minimal_primitive_root(q, 16384);
  const auto mod = *Modulus::create(q);
  EXPECT_EQ(mod.pow(psi, 8192), q - 1);
  EXPECT_EQ(mod.pow(psi, 16384), 1u);
  EXPECT_FALSE(minimal_primitive_root(97, 64).ok());  // 97 != 1 mod 64
}

}  // namespace
}  // namespace privsearch::ring
