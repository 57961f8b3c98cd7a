#include "ckks/params.h"

#include <gtest/gtest.h>

#include "ckks/param_sets.h"
#include "testing/test_util.h"

namespace privsearch::ckks {
namespace {

Status create_status(const ParamsLiteral& lit) { return Params::create(lit).status(); }

TEST(Params, PaperPresetReproducesTable3) {
  const Params p = testing::paper_params();
  EXPECT_EQ(p.n(), 8192u);
  EXPECT_EQ(p.slots(), 4096u);
  ASSERT_EQ(p.num_q(), 2u);
  ASSERT_EQ(p.num_p(), 1u);
  EXPECT_EQ(p.q_moduli()[0].value(), 1152921504606748673ULL);
  EXPECT_EQ(p.q_moduli()[1].value(), 1099511480321ULL);
  EXPECT_EQ(p.p_moduli()[0].value(), 1152921504606830593ULL);
  EXPECT_NEAR(p.log_qp(), 159.9999998065, 1e-6);
  EXPECT_EQ(p.default_scale(), 1099511627776.0);
  EXPECT_FALSE(p.insecure());
}

TEST(Params, IfmaPresetKeepsEveryPrimeBelow2To50) {
  const Params p = testing::ifma_params();
  for (const auto& m : p.key_moduli()) EXPECT_LT(m.value(), 1ULL << 50);
  EXPECT_LE(p.log_qp(), 218);
  for (std::size_t i = 0; i < p.key_moduli().size(); ++i) {
    if (ring::cpu_has_ifma()) {
      EXPECT_EQ(p.ntt(i).default_path(), ring::NttPath::kIfma);
    }
  }
}

TEST(Params, IdsDifferWhenAnythingChanges) {
  const Params a = testing::paper_params();
  auto lit = paper_n8192_literal();
  lit.log_scale = 39;
  const Params b = *Params::create(lit);
  EXPECT_NE(a.id(), b.id());
  EXPECT_EQ(a.id(), testing::paper_params().id());
  auto renamed = paper_n8192_literal();
  renamed.name = "other name";
  EXPECT_EQ(Params::create(renamed)->id(), a.id());  // the name is informational
}

TEST(Params, PresetLookupByName) {
  EXPECT_TRUE(preset_literal("paper-n8192").ok());
  EXPECT_TRUE(preset_literal("ifma-n8192").ok());
  const auto missing = preset_literal("nope");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("paper-n8192"), std::string::npos);
}

TEST(Params, DegreeNotPowerOfTwoIsRejected) {
  auto lit = paper_n8192_literal();
  lit.n = 6000;
  EXPECT_EQ(create_status(lit).code(), StatusCode::kInvalidArgument);
}

TEST(Params, DegreeBelowSecureMinimumIsRejected) {
  auto lit = paper_n8192_literal();
  lit.n = 512;
  EXPECT_EQ(create_status(lit).code(), StatusCode::kInvalidArgument);
}

TEST(Params, ModulusAboveHeStandardBoundIsRejected) {
  auto lit = paper_n8192_literal();
  lit.q_bits = {60, 40, 40, 40};  // 240 bits > 218
  const Status s = create_status(lit);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("128-bit"), std::string::npos);
}

TEST(Params, InsecureFlagSkipsTheSecurityTableOnly) {
  auto lit = paper_n8192_literal();
  lit.q_bits = {60, 40, 40, 40};
  lit.insecure_for_tests = true;
  EXPECT_TRUE(create_status(lit).ok());
}

TEST(Params, CompositeModulusIsRejected) {
  auto lit = paper_n8192_literal();
  lit.q = {1152921504606748673ULL, 1099511480321ULL * 3};
  lit.p = {1152921504606830593ULL};
  EXPECT_EQ(create_status(lit).code(), StatusCode::kInvalidArgument);
}

TEST(Params, PrimeNotOneModTwoNIsRejected) {
  auto lit = paper_n8192_literal();
  lit.q = {1152921504606748673ULL, 1000000007ULL};
  lit.p = {1152921504606830593ULL};
  lit.log_scale = 29;
  const Status s = create_status(lit);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("NTT-friendly"), std::string::npos);
}

TEST(Params, DuplicatePrimeIsRejected) {
  auto lit = paper_n8192_literal();
  lit.q = {1152921504606748673ULL, 1099511480321ULL};
  lit.p = {1099511480321ULL};
  EXPECT_EQ(create_status(lit).code(), StatusCode::kInvalidArgument);
}

TEST(Params, PrimeWiderThan61BitsIsRejected) {
  auto lit = paper_n8192_literal();
  lit.q_bits = {62, 40};
  EXPECT_EQ(create_status(lit).code(), StatusCode::kInvalidArgument);
}

TEST(Params, ScaleNotBelowFirstPrimeIsRejected) {
  auto lit = paper_n8192_literal();
  lit.log_scale = 60;
  EXPECT_EQ(create_status(lit).code(), StatusCode::kInvalidArgument);
  lit.log_scale = 0;
  EXPECT_EQ(create_status(lit).code(), StatusCode::kInvalidArgument);
}

TEST(Params, ScaleAboveRescalingPrimeIsRejected) {
  auto lit = paper_n8192_literal();
  lit.log_scale = 45;  // q_1 has 40 bits
  EXPECT_EQ(create_status(lit).code(), StatusCode::kInvalidArgument);
}

TEST(Params, MissingSpecialPrimeIsRejected) {
  auto lit = paper_n8192_literal();
  lit.p_bits.clear();
  EXPECT_EQ(create_status(lit).code(), StatusCode::kInvalidArgument);
}

TEST(Params, SpecialModulusSmallerThanDataPrimeIsRejected) {
  auto lit = paper_n8192_literal();
  lit.p_bits = {40};
  EXPECT_EQ(create_status(lit).code(), StatusCode::kInvalidArgument);
}

TEST(Params, HeStandardTableRows) {
  EXPECT_EQ(he_standard_max_log_qp(4096), 109);
  EXPECT_EQ(he_standard_max_log_qp(8192), 218);
  EXPECT_EQ(he_standard_max_log_qp(16384), 438);
  EXPECT_EQ(he_standard_max_log_qp(32768), 881);
  EXPECT_EQ(he_standard_max_log_qp(3000), 0);
}

}  // namespace
}  // namespace privsearch::ckks
