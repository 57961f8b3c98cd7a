#include "ckks/evaluator.h"

#include <gtest/gtest.h>

#include "ckks_fixture.h"

namespace privsearch::ckks {
namespace {

using testing::CkksKit;

class EvaluatorTest : public ::testing::TestWithParam<const char*> {
 protected:
  EvaluatorTest() : kit(*Params::create(*preset_literal(GetParam()))) {}
  std::vector<double> random() { return testing::random_values(kit.prng, kit.params.slots()); }
  CkksKit kit;
};

TEST_P(EvaluatorTest, AddSubNegateMatchPlaintextArithmetic) {
  const auto a = random(), b = random();
  const auto ca = kit.encrypt(a, 1), cb = kit.encrypt(b, 1, false);
  const auto sum = kit.decrypt(*kit.evaluator.add(ca, cb));
  const auto diff = kit.decrypt(*kit.evaluator.sub(ca, cb));
  const auto neg = kit.decrypt(*kit.evaluator.negate(ca));
  std::vector<double> es(a.size()), ed(a.size()), en(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    es[i] = a[i] + b[i];
    ed[i] = a[i] - b[i];
    en[i] = -a[i];
  }
  EXPECT_GE(testing::precision_bits(es, sum), 24.0);
  EXPECT_GE(testing::precision_bits(ed, diff), 24.0);
  EXPECT_GE(testing::precision_bits(en, neg), 25.0);
}

TEST_P(EvaluatorTest, AddPlainMatchesPlaintextArithmetic) {
  const auto a = random(), b = random();
  auto ct = kit.encrypt(a, 1);
  const auto pb = *kit.encoder.encode(b, 1, kit.params.default_scale());
  ASSERT_TRUE(kit.evaluator.add_plain_inplace(ct, pb).ok());
  std::vector<double> e(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) e[i] = a[i] + b[i];
  EXPECT_GE(testing::precision_bits(e, kit.decrypt(ct)), 24.0);
  ASSERT_TRUE(kit.evaluator.sub_plain_inplace(ct, pb).ok());
  EXPECT_GE(testing::precision_bits(a, kit.decrypt(ct)), 24.0);
}

TEST_P(EvaluatorTest, MultiplyPlainThenRescaleMatchesProducts) {
  const auto a = random(), b = random();
  const std::size_t top = kit.params.max_level();
  auto ct = kit.encrypt(a, top);
  const auto pb = *kit.encoder.encode(b, top, kit.params.default_scale());
  ASSERT_TRUE(kit.evaluator.multiply_plain_inplace(ct, pb).ok());
  EXPECT_FALSE(ct.is_seeded());
  EXPECT_DOUBLE_EQ(ct.scale(), kit.params.default_scale() * kit.params.default_scale());
  ASSERT_TRUE(kit.evaluator.rescale_inplace(ct).ok());
  EXPECT_EQ(ct.level(), top - 1);
  std::vector<double> e(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) e[i] = a[i] * b[i];
  const auto got = kit.decrypt(ct);
  EXPECT_GE(testing::precision_bits(e, got), 22.0);
}

TEST_P(EvaluatorTest, ModSwitchKeepsTheMessage) {
  const auto a = random();
  auto ct = kit.encrypt(a, kit.params.max_level());
  ASSERT_TRUE(kit.evaluator.mod_switch_to_level_inplace(ct, 0).ok());
  EXPECT_EQ(ct.level(), 0u);
  EXPECT_FALSE(ct.is_seeded());
  EXPECT_GE(testing::precision_bits(a, kit.decrypt(ct)), 25.0);
}

TEST_P(EvaluatorTest, MismatchedLevelsAreRejected) {
  const auto a = random();
  auto c1 = kit.encrypt(a, 1);
  const auto c0 = kit.encrypt(a, 0);
  const Status s = kit.evaluator.add_inplace(c1, c0);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("levels differ"), std::string::npos);
  const auto p0 = *kit.encoder.encode(a, 0, kit.params.default_scale());
  EXPECT_EQ(kit.evaluator.multiply_plain_inplace(c1, p0).code(), StatusCode::kFailedPrecondition);
}

TEST_P(EvaluatorTest, MismatchedScalesAreRejected) {
  const auto a = random();
  auto c = kit.encrypt(a, 1);
  const auto p = *kit.encoder.encode(a, 1, kit.params.default_scale() * 2);
  EXPECT_EQ(kit.evaluator.add_plain_inplace(c, p).code(), StatusCode::kFailedPrecondition);
}

TEST_P(EvaluatorTest, RescaleAtLevelZeroIsRejected) {
  auto c = kit.encrypt(random(), 0);
  EXPECT_EQ(kit.evaluator.rescale_inplace(c).code(), StatusCode::kFailedPrecondition);
}

TEST_P(EvaluatorTest, ScaleOverflowIsOutOfRange) {
  auto c = kit.encrypt(random(), 0);
  const auto p = *kit.encoder.encode(std::vector<double>{1.0}, 0, kit.params.default_scale());
  EXPECT_EQ(kit.evaluator.multiply_plain_inplace(c, p).code(), StatusCode::kOutOfRange);
}

TEST_P(EvaluatorTest, ModSwitchUpwardsIsRejected) {
  auto c = kit.encrypt(random(), 0);
  EXPECT_EQ(kit.evaluator.mod_switch_to_level_inplace(c, 1).code(),
            StatusCode::kFailedPrecondition);
}

INSTANTIATE_TEST_SUITE_P(Presets, EvaluatorTest, ::testing::Values("paper-n8192", "ifma-n8192"),
                         [](const auto& param_info) {
                           std::string s = param_info.param;
                           for (auto& ch : s) {
                             if (ch == '-') ch = '_';
                           }
                           return s;
                         });

TEST(Evaluator, ForeignParamsCiphertextIsRejected) {
  CkksKit a(testing::insecure_params(64)), b(testing::insecure_params(32));
  auto ca = a.encrypt({1.0}, 0);
  const auto cb = b.encrypt({1.0}, 0);
  EXPECT_EQ(a.evaluator.add_inplace(ca, cb).code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace privsearch::ckks

namespace privsearch::ckks {
namespace {

// The ciphertext keeps its shape invariant itself: rows that disagree with the level, or rows in
// coefficient form, stop the process instead of reaching a kernel.
TEST(CiphertextShapeDeathTest, RowsMustMatchTheLevelInNttForm) {
  const ParamsId id{};
  EXPECT_DEATH(Ciphertext(id, 1, 1.0, ring::RnsPoly(16, 1, true), ring::RnsPoly(16, 2, true)),
               "level \\+ 1 rows");
  EXPECT_DEATH(Ciphertext(id, 0, 1.0, ring::RnsPoly(16, 1, false), ring::RnsPoly(16, 1, true)),
               "NTT form");
  Ciphertext ok(id, 0, 1.0, ring::RnsPoly(16, 1, true), ring::RnsPoly(16, 1, true));
  EXPECT_EQ(ok.level(), 0u);
  EXPECT_DEATH(ok.finish_rescale(1.0), "level 0");
}

}  // namespace
}  // namespace privsearch::ckks
