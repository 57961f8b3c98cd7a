#include "ring/automorphism.h"

#include <gtest/gtest.h>

#include "core/csprng.h"
#include "ring/ntt.h"
#include "ring/primes.h"

namespace privsearch::ring {
namespace {

TEST(Automorphism, GaloisEltForStepIsPowerOfFive) {
  EXPECT_EQ(galois_elt_for_step(0, 8192), 1u);
  EXPECT_EQ(galois_elt_for_step(1, 8192), 5u);
  EXPECT_EQ(galois_elt_for_step(2, 8192), 25u);
  // Rotating right by 1 is rotating left by n/2 - 1.
  EXPECT_EQ(galois_elt_for_step(-1, 8192), galois_elt_for_step(4095, 8192));
  EXPECT_EQ(*step_for_galois_elt(galois_elt_for_step(123, 8192), 8192), 123);
  EXPECT_FALSE(step_for_galois_elt(3, 8192).ok());
}

TEST(Automorphism, CoefficientFormMatchesDefinition) {
  const auto q = *Modulus::create(97);
  const std::size_t n = 8;
  std::vector<std::uint64_t> a = {1, 2, 3, 4, 5, 6, 7, 8}, out(n);
  apply_galois_coeff(a.data(), 3, q, out.data(), n);
  // X^j -> X^(3j mod 16), negated when 3j mod 16 >= 8.
  std::vector<std::uint64_t> expected(n);
  for (std::size_t j = 0; j < n; ++j) {
    const std::size_t e = (3 * j) % 16;
    expected[e % n] = e >= n ? (97 - a[j]) % 97 : a[j];
  }
  EXPECT_EQ(out, expected);
}

TEST(Automorphism, NttPermutationCommutesWithTheTransform) {
  const std::size_t n = 1024;
  const auto q = *Modulus::create(largest_ntt_primes(50, n, 1).value()[0]);
  const auto t = *NttTables::create(n, q);
  Prng prng = Prng::from_seed(Seed{}, 41);
  std::vector<std::uint64_t> a(n);
  for (auto& x : a) x = prng.uniform_below(q.value());
  for (std::uint64_t g :
       {galois_elt_for_step(1, n), galois_elt_for_step(37, n), galois_elt_conjugate(n)}) {
    std::vector<std::uint64_t> coeff(n), via_coeff(n), via_ntt(n), fa = a;
    apply_galois_coeff(a.data(), g, q, coeff.data(), n);
    via_coeff = coeff;
    t.forward(via_coeff.data());
    t.forward(fa.data());
    const auto perm = *GaloisPermutation::create(g, n);
    perm.apply(fa.data(), via_ntt.data());
    EXPECT_EQ(via_ntt, via_coeff) << "g = " << g;
  }
  EXPECT_FALSE(GaloisPermutation::create(4, n).ok());
}

// The block form (one source block and a lane shuffle per eight values) is what the AVX-512
// paths apply; it must agree with the plain table for every size and element.
TEST(Automorphism, BlockFormMatchesTheTable) {
  const auto q = *Modulus::create(97);
  Prng prng = Prng::from_seed(Seed{}, 43);
  for (std::size_t n : {8u, 16u, 64u, 1024u, 8192u}) {
    std::vector<std::uint64_t> elts = {galois_elt_for_step(1, n), galois_elt_for_step(-1, n),
                                       galois_elt_conjugate(n)};
    if (n >= 64) elts.push_back(galois_elt_for_step(static_cast<int>(n / 4) - 3, n));
    for (std::uint64_t g : elts) {
      const auto perm = *GaloisPermutation::create(g, n);
      ASSERT_EQ(perm.block_source().size(), n / 8);
      std::vector<std::uint64_t> in(n), out(n), acc(n), expected(n), expected_acc(n);
      for (auto& v : in) v = prng.uniform_below(97);
      for (auto& v : acc) v = prng.uniform_below(97);
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t block = perm.block_source()[i / 8];
        const std::size_t lane = (perm.block_lanes()[i / 8] >> (8 * (i % 8))) & 7;
        ASSERT_EQ(perm.table()[i], 8 * block + lane) << "n = " << n << ", g = " << g;
        expected[i] = in[perm.table()[i]];
        expected_acc[i] = (acc[i] + in[perm.table()[i]]) % 97;
      }
      perm.apply(in.data(), out.data());
      EXPECT_EQ(out, expected) << "n = " << n << ", g = " << g;
      perm.apply_add(in.data(), acc.data(), q);
      EXPECT_EQ(acc, expected_acc) << "n = " << n << ", g = " << g;
    }
  }
}

}  // namespace
}  // namespace privsearch::ring
