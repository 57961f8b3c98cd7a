#include <gtest/gtest.h>

#include "ckks/internal/poly_util.h"
#include "ckks_fixture.h"

namespace privsearch::ckks {
namespace {

using testing::CkksKit;

TEST(Encryption, SymmetricRoundTripKeepsTwentyFiveBits) {
  for (const Params& p : {testing::paper_params(), testing::ifma_params()}) {
    CkksKit kit(p);
    for (std::size_t level = 0; level <= p.max_level(); ++level) {
      const auto v = testing::random_values(kit.prng, p.slots());
      const auto back = kit.decrypt(kit.encrypt(v, level, true));
      EXPECT_GE(testing::precision_bits(v, back), 25.0) << p.name() << " level " << level;
    }
  }
}

TEST(Encryption, PublicKeyRoundTripKeepsTwentyFiveBits) {
  for (const Params& p : {testing::paper_params(), testing::ifma_params()}) {
    CkksKit kit(p);
    for (std::size_t level = 0; level <= p.max_level(); ++level) {
      const auto v = testing::random_values(kit.prng, p.slots());
      const auto back = kit.decrypt(kit.encrypt(v, level, false));
      EXPECT_GE(testing::precision_bits(v, back), 25.0) << p.name() << " level " << level;
    }
  }
}

TEST(Encryption, SymmetricCiphertextKeepsItsSeedAndTheSeedExpandsToC1) {
  CkksKit kit(testing::insecure_params(64));
  const auto ct = kit.encrypt({0.5}, 2);
  ASSERT_TRUE(ct.is_seeded());
  const auto c1 = expand_uniform(kit.params, key_rows(kit.params, 2, false), *ct.c1_seed(), 0);
  EXPECT_EQ(c1, ct.c1());
}

TEST(Encryption, FreshCiphertextsOfTheSameMessageDiffer) {
  CkksKit kit(testing::insecure_params(64));
  const auto a = kit.encrypt({0.5}, 1), b = kit.encrypt({0.5}, 1);
  EXPECT_NE(a.c0(), b.c0());
  EXPECT_NE(a.c1(), b.c1());
}

TEST(Encryption, WrongParamsKeyIsRejected) {
  CkksKit kit(testing::insecure_params(64));
  CkksKit other(testing::insecure_params(32));
  const auto pt = *kit.encoder.encode(std::vector<double>{1.0}, 0, 1e6);
  EXPECT_EQ(kit.encryptor.encrypt_symmetric(other.sk, pt, kit.prng).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(kit.encryptor.encrypt_public(other.pk, pt, kit.prng).status().code(),
            StatusCode::kFailedPrecondition);
  const auto ct = kit.encrypt({1.0}, 0);
  EXPECT_EQ(kit.decryptor.decrypt(other.sk, ct).status().code(), StatusCode::kFailedPrecondition);
}

TEST(Encryption, DecryptingWithAnotherSecretKeyGivesNoise) {
  CkksKit kit(testing::insecure_params(64), 1);
  CkksKit other(testing::insecure_params(64), 2);
  const std::vector<double> v(32, 0.25);
  const auto wrong = *kit.encoder.decode(*kit.decryptor.decrypt(other.sk, kit.encrypt(v, 1)));
  EXPECT_LT(testing::precision_bits(v, wrong), 1.0);
}

TEST(KeyGeneration, PublicKeyIsAnEncryptionOfZero) {
  CkksKit kit(testing::insecure_params(64));
  // pk0 + pk1*s = e, small, in every row of the key basis.
  const auto rows = key_rows(kit.params, kit.params.max_level(), true);
  ring::RnsPoly e = kit.pk.pk0();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    ring::mul_add_row(kit.pk.pk1().row(i), kit.sk.row(rows[i]), e.row(i), kit.params.n(),
                      kit.params.key_moduli()[rows[i]]);
  }
  from_ntt(kit.params, rows, e);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::uint64_t q = kit.params.key_moduli()[rows[i]].value();
    for (std::size_t k = 0; k < kit.params.n(); ++k) {
      const std::uint64_t x = e.row(i)[k];
      EXPECT_TRUE(x <= 21 || q - x <= 21) << "row " << i << " coeff " << k;
    }
  }
}

}  // namespace
}  // namespace privsearch::ckks
