#include "ckks/compact.h"

#include <gtest/gtest.h>

#include "ckks/client/compact_decryptor.h"
#include "ckks/serialization.h"
#include "ckks_fixture.h"

namespace privsearch::ckks {
namespace {

using testing::CkksKit;

class CompactTest : public ::testing::TestWithParam<const char*> {
 protected:
  CompactTest() : kit(*Params::create(*preset_literal(GetParam())), 501) {}
  // A last-level ciphertext like a rerank response: a product, rescaled to level 0.
  Ciphertext response(const std::vector<double>& v) {
    auto ct = kit.encrypt(v, 1);
    const auto one = *kit.encoder.encode_constant(1.0, 1, kit.params.default_scale());
    ct = *kit.evaluator.multiply_plain(ct, one);
    ct = *kit.evaluator.rescale(ct);
    return *kit.evaluator.mod_switch_to_level(ct, 0);
  }
  CkksKit kit;
};

TEST_P(CompactTest, CompactResponseMeetsSizeAndPrecisionTargets) {
  const auto v = testing::random_values(kit.prng, kit.params.slots());
  const auto ct = response(v);
  const CompactOptions opts{1.0, 18.0};
  const auto c = *compact(kit.params, ct, opts);
  const auto bytes = serialize_compact(c);
  EXPECT_LE(bytes.size(), 66000u) << GetParam();
  const double predicted =
      predicted_compact_precision_bits(kit.params, c.layout(), c.scale(), opts.value_bound);
  EXPECT_GE(predicted, 18.0);
  const auto back = *deserialize_compact(kit.params, bytes);
  EXPECT_EQ(back, c);
  const auto got = *CompactDecryptor(kit.params).decrypt_decode(kit.sk, kit.encoder, back);
  EXPECT_GE(testing::precision_bits(v, got), 18.0) << GetParam();
}

TEST_P(CompactTest, MorePrecisionCostsMoreBitsAndIsDelivered) {
  const auto v = testing::random_values(kit.prng, kit.params.slots());
  const auto ct = response(v);
  std::size_t last_size = 0;
  for (double bits : {12.0, 18.0, 22.0}) {
    const auto c = *compact(kit.params, ct, CompactOptions{1.0, bits});
    const auto size = serialize_compact(c).size();
    EXPECT_GT(size, last_size);
    last_size = size;
    const auto got = *CompactDecryptor(kit.params).decrypt_decode(kit.sk, kit.encoder, c);
    EXPECT_GE(testing::precision_bits(v, got), bits - 0.5) << bits;
  }
}

TEST_P(CompactTest, LargerValueBoundsAreHonoured) {
  std::vector<double> v = testing::random_values(kit.prng, kit.params.slots());
  for (auto& x : v) x *= 50.0;
  auto ct = kit.encrypt(v, 0);
  const auto c = *compact(kit.params, ct, CompactOptions{64.0, 16.0});
  const auto got = *CompactDecryptor(kit.params).decrypt_decode(kit.sk, kit.encoder, c);
  std::vector<double> rel(v.size()), rel_got(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    rel[i] = v[i] / 64.0;
    rel_got[i] = got[i] / 64.0;
  }
  EXPECT_GE(testing::precision_bits(rel, rel_got), 16.0);
}

INSTANTIATE_TEST_SUITE_P(Presets, CompactTest, ::testing::Values("paper-n8192", "ifma-n8192"),
                         [](const auto& param_info) {
                           std::string s = param_info.param;
                           for (auto& ch : s) {
                             if (ch == '-') ch = '_';
                           }
                           return s;
                         });

TEST(CompactLayoutChoice, ImpossiblePrecisionIsOutOfRange) {
  const Params p = testing::paper_params();
  EXPECT_EQ(choose_compact_layout(p, p.default_scale(), CompactOptions{1.0, 55.0}).status().code(),
            StatusCode::kOutOfRange);
  EXPECT_EQ(choose_compact_layout(p, p.default_scale(), CompactOptions{-1.0, 10.0}).status().code(),
            StatusCode::kInvalidArgument);
}

class CompactDecoding : public ::testing::Test {
 protected:
  CompactDecoding() : kit(testing::insecure_params(64), 502) {
    const auto ct = kit.encrypt({0.5, -0.25}, 0);
    c = *compact(kit.params, ct, CompactOptions{1.0, 16.0});
    bytes = serialize_compact(c);
  }
  CkksKit kit;
  CompactCiphertext c;
  std::vector<std::uint8_t> bytes;
};

TEST_F(CompactDecoding, RoundTripAndDecrypt) {
  const auto back = *deserialize_compact(kit.params, bytes);
  const auto got = *CompactDecryptor(kit.params).decrypt_decode(kit.sk, kit.encoder, back);
  EXPECT_NEAR(got[0], 0.5, 1e-4);
  EXPECT_NEAR(got[1], -0.25, 1e-4);
}

TEST_F(CompactDecoding, InconsistentLayoutIsRejected) {
  auto b = bytes;
  b[40] = 70;  // k above 62
  EXPECT_EQ(deserialize_compact(kit.params, b).status().code(), StatusCode::kDataLoss);
  b = bytes;
  b[41] = static_cast<std::uint8_t>(b[40] + 1);  // b0 > k
  EXPECT_EQ(deserialize_compact(kit.params, b).status().code(), StatusCode::kDataLoss);
}

TEST_F(CompactDecoding, TruncatedOrTrailingBytesAreRejected) {
  auto b = bytes;
  b.pop_back();
  EXPECT_EQ(deserialize_compact(kit.params, b).status().code(), StatusCode::kDataLoss);
  b = bytes;
  b.push_back(0);
  EXPECT_EQ(deserialize_compact(kit.params, b).status().code(), StatusCode::kDataLoss);
}

TEST_F(CompactDecoding, ForeignParamsAreRejected) {
  auto b = bytes;
  b[8] ^= 1;
  EXPECT_EQ(deserialize_compact(kit.params, b).status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(CompactDecoding, BadScaleIsRejected) {
  auto b = bytes;
  for (int i = 0; i < 8; ++i) b[44 + static_cast<std::size_t>(i)] = 0;
  EXPECT_EQ(deserialize_compact(kit.params, b).status().code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace privsearch::ckks
