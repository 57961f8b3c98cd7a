#include "ring/modulus.h"

#include <gtest/gtest.h>

#include "core/csprng.h"
#include "testing/reference.h"

namespace privsearch::ring {
namespace {

TEST(Modulus, RejectsOutOfRangeModuli) {
  EXPECT_EQ(Modulus::create(0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Modulus::create(1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Modulus::create(1ULL << 62).status().code(), StatusCode::kInvalidArgument);
}

TEST(Modulus, BarrettAndShoupMatchPlainArithmetic) {
  Prng prng = Prng::from_seed(Seed{}, 11);
  for (std::uint64_t q :
       {3ULL, 97ULL, 1099511480321ULL, 1152921504606748673ULL, (1ULL << 61) - 1, 1ULL << 40}) {
    const auto m = *Modulus::create(q);
    for (int i = 0; i < 2000; ++i) {
      const u64 a = prng.next_u64() % q, b = prng.next_u64() % q;
      const u64 x = prng.next_u64();
      const u128 wide = (static_cast<u128>(prng.next_u64()) << 64) | prng.next_u64();
      ASSERT_EQ(m.reduce(x), x % q);
      ASSERT_EQ(m.reduce_u128(wide), static_cast<u64>(wide % q));
      ASSERT_EQ(m.mul(a, b), testing::ref_mulmod(a, b, q));
      ASSERT_EQ(m.add(a, b), (a + b) % q);
      ASSERT_EQ(m.sub(a, b), (a + q - b) % q);
      ASSERT_EQ(m.neg(a), (q - a) % q);
      const u64 ws = m.shoup(b);
      const u64 lazy = m.mul_shoup_lazy(x, b, ws);
      ASSERT_LT(lazy, 2 * q);  // stated range [0, 2q)
      ASSERT_EQ(lazy % q, testing::ref_mulmod(x % q, b, q));
      ASSERT_EQ(m.mul_shoup(a, b, ws), testing::ref_mulmod(a, b, q));
    }
  }
}

TEST(Modulus, FromSignedHandlesExtremes) {
  const auto m = *Modulus::create(97);
  EXPECT_EQ(m.from_signed(-1), 96u);
  EXPECT_EQ(m.from_signed(0), 0u);
  EXPECT_EQ(m.from_signed(-97), 0u);
  EXPECT_EQ(m.from_signed(INT64_MIN), static_cast<u64>((97 - (9223372036854775808ULL % 97)) % 97));
  EXPECT_EQ(m.from_signed(INT64_MAX), 9223372036854775807ULL % 97);
}

TEST(Modulus, InverseAndPow) {
  const auto m = *Modulus::create(1099511480321ULL);
  for (u64 a : {1ULL, 2ULL, 12345ULL, 1099511480320ULL}) EXPECT_EQ(m.mul(a, m.inv(a)), 1u);
  EXPECT_EQ(m.pow(3, 0), 1u);
}

}  // namespace
}  // namespace privsearch::ring
