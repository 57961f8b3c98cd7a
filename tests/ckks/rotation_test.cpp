#include <gtest/gtest.h>

#include <numeric>

#include "ckks/galois_keys.h"
#include "ckks/serialization.h"
#include "ckks_fixture.h"

namespace privsearch::ckks {
namespace {

using testing::CkksKit;

std::vector<double> rotated(const std::vector<double>& v, int k) {
  const std::size_t s = v.size();
  std::vector<double> out(s);
  for (std::size_t j = 0; j < s; ++j) {
    out[j] = v[(j + static_cast<std::size_t>(normalize_step(k, s))) % s];
  }
  return out;
}

TEST(Rotation, EveryStepMatchesPlaintextRotationAtEveryLevel) {
  CkksKit kit(testing::insecure_params(64), 301);
  const std::size_t slots = kit.params.slots();
  std::vector<int> steps(slots - 1);
  std::iota(steps.begin(), steps.end(), 1);
  const auto gk = *kit.keygen.create_galois_keys(kit.sk, steps, false, kit.prng);
  const auto v = testing::random_values(kit.prng, slots);
  for (std::size_t level = 0; level <= kit.params.max_level(); ++level) {
    const auto ct = kit.encrypt(v, level);
    for (int k : steps) {
      const auto r = kit.evaluator.rotate(ct, k, gk);
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      EXPECT_GE(testing::precision_bits(rotated(v, k), kit.decrypt(*r)), 24.0)
          << "step " << k << " level " << level;
    }
  }
}

TEST(Rotation, NegativeStepsRotateRight) {
  CkksKit kit(testing::insecure_params(64), 302);
  const std::vector<int> steps = {-3};
  const auto gk = *kit.keygen.create_galois_keys(kit.sk, steps, false, kit.prng);
  const auto v = testing::random_values(kit.prng, kit.params.slots());
  const auto r = *kit.evaluator.rotate(kit.encrypt(v, 1), -3, gk);
  EXPECT_GE(testing::precision_bits(rotated(v, -3), kit.decrypt(r)), 24.0);
  EXPECT_TRUE(kit.evaluator.rotate(kit.encrypt(v, 1), 29, gk).ok());  // -3 mod 32
}

TEST(Rotation, PaperPresetPowersOfTwoKeepPrecision) {
  CkksKit kit(testing::paper_params(), 303);
  const std::vector<int> steps = {1, 2, 4, 512, 2048, 4095};
  const auto gk = *kit.keygen.create_galois_keys(kit.sk, steps, false, kit.prng);
  const auto v = testing::random_values(kit.prng, kit.params.slots());
  for (std::size_t level = 0; level <= 1; ++level) {
    const auto ct = kit.encrypt(v, level);
    for (int k : steps) {
      const auto r = *kit.evaluator.rotate(ct, k, gk);
      EXPECT_GE(testing::precision_bits(rotated(v, k), kit.decrypt(r)), 24.0)
          << "step " << k << " level " << level;
    }
  }
}

TEST(Rotation, ComposedRotationsEqualTheSumRotation) {
  CkksKit kit(testing::ifma_params(), 304);
  const std::vector<int> steps = {3, 5, 8};
  const auto gk = *kit.keygen.create_galois_keys(kit.sk, steps, false, kit.prng);
  const auto v = testing::random_values(kit.prng, kit.params.slots());
  const auto ct = kit.encrypt(v, 2);
  const auto ab = *kit.evaluator.rotate(*kit.evaluator.rotate(ct, 3, gk), 5, gk);
  const auto direct = *kit.evaluator.rotate(ct, 8, gk);
  const auto x = kit.decrypt(ab), y = kit.decrypt(direct);
  EXPECT_GE(testing::precision_bits(x, y), 23.0);
  EXPECT_GE(testing::precision_bits(rotated(v, 8), x), 23.0);
}

TEST(Rotation, ConjugationConjugatesEverySlot) {
  CkksKit kit(testing::insecure_params(64), 305);
  const auto gk = *kit.keygen.create_galois_keys(kit.sk, {}, true, kit.prng);
  std::vector<std::complex<double>> v(kit.params.slots());
  for (std::size_t j = 0; j < v.size(); ++j) v[j] = {0.01 * double(j), 0.5 - 0.02 * double(j)};
  const auto pt = *kit.encoder.encode(v, 1, kit.params.default_scale());
  const auto ct = *kit.encryptor.encrypt_symmetric(kit.sk, pt, kit.prng);
  const auto conj = *kit.evaluator.conjugate(ct, gk);
  const auto back = *kit.encoder.decode_complex(*kit.decryptor.decrypt(kit.sk, conj));
  for (std::size_t j = 0; j < v.size(); ++j) EXPECT_LT(std::abs(back[j] - std::conj(v[j])), 1e-7);
}

TEST(Rotation, MissingStepIsNotFoundAndNeverDerived) {
  CkksKit kit(testing::insecure_params(64), 306);
  const std::vector<int> steps = {1, 2};
  const auto gk = *kit.keygen.create_galois_keys(kit.sk, steps, false, kit.prng);
  const auto ct = kit.encrypt({1.0}, 1);
  const auto r = kit.evaluator.rotate(ct, 3, gk);  // 3 = 1 + 2 but must not be composed
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("step 3"), std::string::npos);
  EXPECT_EQ(kit.evaluator.conjugate(ct, gk).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(kit.evaluator.rotate(ct, 0, gk).ok());  // identity needs no key
}

TEST(Rotation, StepZeroKeyRequestIsRejected) {
  CkksKit kit(testing::insecure_params(64), 307);
  const std::vector<int> steps = {32};
  EXPECT_EQ(kit.keygen.create_galois_keys(kit.sk, steps, false, kit.prng).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(Rotation, ForeignKeySetIsRejected) {
  CkksKit kit(testing::insecure_params(64), 308), other(testing::insecure_params(32), 309);
  const std::vector<int> steps = {1};
  const auto gk = *other.keygen.create_galois_keys(other.sk, steps, false, other.prng);
  EXPECT_EQ(kit.evaluator.rotate(kit.encrypt({1.0}, 0), 1, gk).status().code(),
            StatusCode::kFailedPrecondition);
}

TEST(Hoisting, HoistedRotationsEqualPlainRotations) {
  CkksKit kit(testing::paper_params(), 310);
  std::vector<int> steps(16);
  std::iota(steps.begin(), steps.end(), 1);
  const auto gk = *kit.keygen.create_galois_keys(kit.sk, steps, false, kit.prng);
  const auto v = testing::random_values(kit.prng, kit.params.slots());
  const auto ct = kit.encrypt(v, 1);
  const auto h = *kit.evaluator.hoist(ct);
  for (int k : steps) {
    const auto hoisted = *kit.evaluator.rotate_hoisted(h, k, gk);
    const auto plain = *kit.evaluator.rotate(ct, k, gk);
    // Same decomposition, same key: bit-identical ciphertexts.
    EXPECT_EQ(hoisted, plain) << "step " << k;
    EXPECT_GE(testing::precision_bits(rotated(v, k), kit.decrypt(hoisted)), 24.0);
  }
}

TEST(Hoisting, DoubleHoistedSumOfProductsEqualsThePlainComputation) {
  for (const char* preset : {"paper-n8192", "ifma-n8192"}) {
    CkksKit kit(*Params::create(*preset_literal(preset)), 311);
    const std::vector<int> steps = {1, 2, 3, 7};
    const auto gk = *kit.keygen.create_galois_keys(kit.sk, steps, false, kit.prng);
    const std::size_t level = kit.params.max_level();
    const auto v = testing::random_values(kit.prng, kit.params.slots());
    const auto ct = kit.encrypt(v, level);
    const auto h = *kit.evaluator.hoist(ct);
    std::vector<double> expected(kit.params.slots(), 0.0);
    ExtendedCiphertext acc;
    for (int k : {0, 1, 2, 3, 7}) {
      const auto w = testing::random_values(kit.prng, kit.params.slots());
      const auto pw = *kit.encoder.encode_extended(w, level, kit.params.default_scale());
      const auto rk = *kit.evaluator.rotate_hoisted_extended(h, k, gk);
      ASSERT_TRUE(kit.evaluator.multiply_plain_accumulate(acc, rk, pw).ok());
      const auto rv = rotated(v, k);
      for (std::size_t j = 0; j < expected.size(); ++j) expected[j] += rv[j] * w[j];
    }
    auto out = *kit.evaluator.mod_down(acc);
    ASSERT_TRUE(kit.evaluator.rescale_inplace(out).ok());
    EXPECT_GE(testing::precision_bits(expected, kit.decrypt(out)), 21.0) << preset;
  }
}

}  // namespace
}  // namespace privsearch::ckks

namespace privsearch::ckks {
namespace {

TEST(GroupedDigits, RerankPresetUsesOneDigitAndRotatesPrecisely) {
  CkksKit kit(*Params::create(rerank_n8192_literal()), 320);
  EXPECT_EQ(kit.params.num_digits(), 1u);
  const std::vector<int> steps = {1, 8, 512};
  const auto gk = *kit.keygen.create_galois_keys(kit.sk, steps, false, kit.prng);
  const auto v = testing::random_values(kit.prng, kit.params.slots());
  for (std::size_t level = 0; level <= kit.params.max_level(); ++level) {
    const auto ct = kit.encrypt(v, level);
    for (int k : steps) {
      const auto r = *kit.evaluator.rotate(ct, k, gk);
      // delta = 2^32: ModDown rounding (~2^13 slot units at the worst slot) leaves ~18.5 bits.
      EXPECT_GE(testing::precision_bits(rotated(v, k), kit.decrypt(r)), 17.5)
          << "step " << k << " level " << level;
    }
  }
}

TEST(GroupedDigits, TwoDigitsOverThreePrimesMatchOneDigitPerPrime) {
  auto lit = insecure_test_literal(256);
  lit.p_bits = {50, 50};
  lit.dnum = 2;  // digits {q0, q1} and {q2}
  const auto params = *Params::create(lit);
  ASSERT_EQ(params.num_digits(), 2u);
  EXPECT_EQ(params.digit_size(0), 2u);
  CkksKit kit(params, 321);
  const std::vector<int> steps = {3};
  const auto gk = *kit.keygen.create_galois_keys(kit.sk, steps, false, kit.prng);
  const auto v = testing::random_values(kit.prng, kit.params.slots());
  for (std::size_t level = 0; level <= 2; ++level) {
    const auto r = *kit.evaluator.rotate(kit.encrypt(v, level), 3, gk);
    EXPECT_GE(testing::precision_bits(rotated(v, 3), kit.decrypt(r)), 24.0) << level;
  }
  // Serialization carries the digit count.
  const auto back = *deserialize_params(serialize_params(params));
  EXPECT_EQ(back.num_digits(), 2u);
  EXPECT_EQ(back.id(), params.id());
  EXPECT_EQ(*deserialize_galois_keys(params, serialize_galois_keys(params, gk)), gk);
}

TEST(GroupedDigits, SpecialModulusSmallerThanADigitIsRejected) {
  auto lit = insecure_test_literal(64);
  lit.dnum = 1;  // one digit of 130 bits, P has 50
  const auto r = Params::create(lit);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("digit"), std::string::npos);
  lit.dnum = 4;  // more digits than primes
  EXPECT_EQ(Params::create(lit).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace privsearch::ckks
