#include "pir/paillier/mont_batch.h"

#include <gtest/gtest.h>

#include "pir/paillier/bigint.h"

namespace privsearch::pir {
namespace {

void check_products(std::size_t bits, bool ifma) {
  Prng prng = Prng::from_seed(Seed{static_cast<std::uint8_t>(bits & 0xff)}, bits);
  mpz_class m = random_bits(bits, prng);
  mpz_setbit(m.get_mpz_t(), static_cast<mp_bitcnt_t>(bits - 1));
  mpz_setbit(m.get_mpz_t(), 0);
  auto mb = MontgomeryBatch::create(m, ifma);
  ASSERT_TRUE(mb.ok());
  const std::size_t L = mb->limbs();
  std::vector<std::vector<std::uint64_t>> a(8, std::vector<std::uint64_t>(L)),
      b(8, std::vector<std::uint64_t>(L)), out(8, std::vector<std::uint64_t>(L));
  std::vector<mpz_class> av(8), bv(8);
  for (int round = 0; round < 3; ++round) {
    for (int k = 0; k < 8; ++k) {
      av[k] = random_below(m, prng);
      bv[k] = random_below(m, prng);
      if (round == 1 && k == 0) av[k] = m - 1;  // extreme operands
      if (round == 1 && k == 1) bv[k] = 0;
      mb->to_mont(av[k], a[k].data());
      mb->to_mont(bv[k], b[k].data());
    }
    const std::uint64_t* ap[8];
    const std::uint64_t* bp[8];
    std::uint64_t* op[8];
    for (int k = 0; k < 8; ++k) {
      ap[k] = a[k].data();
      bp[k] = b[k].data();
      op[k] = out[k].data();
    }
    const std::size_t count = round == 2 ? 5 : 8;  // partial batches too
    mb->mul(ap, bp, op, count);
    for (std::size_t k = 0; k < count; ++k) {
      EXPECT_EQ(mb->from_mont(out[k].data()), mpz_class(av[k] * bv[k] % m)) << k;
      // Lazy outputs (< 2M) are valid inputs: square them again.
    }
    mb->mul(op, op, op, count);  // in place
    for (std::size_t k = 0; k < count; ++k) {
      mpz_class p = av[k] * bv[k] % m;
      EXPECT_EQ(mb->from_mont(out[k].data()), mpz_class(p * p % m));
    }
  }
}

TEST(MontgomeryBatch, MatchesGmpScalar) {
  for (std::size_t bits : {61u, 520u, 1024u, 6144u}) check_products(bits, false);
}

TEST(MontgomeryBatch, MatchesGmpIfmaWhenAvailable) {
  // Without IFMA (compiler or CPU) create() falls back to the scalar path, which the test above
  // already covers: skip rather than test it twice under this name.
  const mpz_class m = (mpz_class(1) << 520) + 1;  // odd, as the tests below use
  if (!MontgomeryBatch::create(m, true)->uses_ifma()) GTEST_SKIP() << "no AVX-512 IFMA here";
  for (std::size_t bits : {61u, 520u, 1024u, 6144u}) check_products(bits, true);
}

TEST(MontgomeryBatch, LongChainStaysInRange) {
  Prng prng = Prng::from_seed(Seed{2});
  mpz_class m = random_bits(3072, prng);
  mpz_setbit(m.get_mpz_t(), 3071);
  mpz_setbit(m.get_mpz_t(), 0);
  auto mb = MontgomeryBatch::create(m);
  ASSERT_TRUE(mb.ok());
  const std::size_t L = mb->limbs();
  std::vector<std::uint64_t> x(L), y(L);
  mpz_class xv = random_below(m, prng), yv = random_below(m, prng);
  mb->to_mont(xv, x.data());
  mb->to_mont(yv, y.data());
  mpz_class expect = xv;
  for (int i = 0; i < 200; ++i) {
    const std::uint64_t* ap[1] = {x.data()};
    const std::uint64_t* bp[1] = {y.data()};
    std::uint64_t* op[1] = {x.data()};
    mb->mul(ap, bp, op, 1);
    expect = expect * yv % m;
  }
  EXPECT_EQ(mb->from_mont(x.data()), expect);
}

TEST(MontgomeryBatch, RejectsEvenModulus) {
  EXPECT_FALSE(MontgomeryBatch::create(mpz_class(1000)).ok());
  EXPECT_FALSE(MontgomeryBatch::create(mpz_class(1)).ok());
}

}  // namespace
}  // namespace privsearch::pir
