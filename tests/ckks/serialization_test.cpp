#include "ckks/serialization.h"

#include <gtest/gtest.h>

#include "ckks_fixture.h"
#include "core/sha256.h"

namespace privsearch::ckks {
namespace {

using testing::CkksKit;
using Bytes = std::vector<std::uint8_t>;

// Offsets in the common header.
constexpr std::size_t kVersionOffset = 4;
constexpr std::size_t kTypeOffset = 6;
constexpr std::size_t kIdOffset = 8;
constexpr std::size_t kBodyOffset = 40;

class SerializationTest : public ::testing::Test {
 protected:
  SerializationTest() : kit(testing::insecure_params(64), 7) {}
  Ciphertext fresh(std::size_t level) {
    return kit.encrypt(testing::random_values(kit.prng, 32), level);
  }
  Bytes seeded_bytes(std::size_t level) {
    return *serialize_ciphertext(kit.params, fresh(level), CiphertextForm::kSeeded);
  }
  CkksKit kit;
};

TEST_F(SerializationTest, ParamsRoundTrip) {
  for (const Params& p : {kit.params, testing::paper_params(), testing::ifma_params()}) {
    const auto back = *deserialize_params(serialize_params(p));
    EXPECT_EQ(back.id(), p.id());
    EXPECT_EQ(back.name(), p.name());
  }
}

TEST_F(SerializationTest, PlaintextRoundTrip) {
  const auto pt = *kit.encoder.encode(testing::random_values(kit.prng, 32), 2, 1e9);
  EXPECT_EQ(*deserialize_plaintext(kit.params, serialize_plaintext(kit.params, pt)), pt);
}

TEST_F(SerializationTest, CiphertextRoundTripInBothForms) {
  for (std::size_t level = 0; level <= kit.params.max_level(); ++level) {
    const auto ct = fresh(level);
    for (auto form : {CiphertextForm::kFull, CiphertextForm::kSeeded}) {
      const auto bytes = *serialize_ciphertext(kit.params, ct, form);
      const auto back = *deserialize_ciphertext(kit.params, bytes);
      EXPECT_EQ(back, ct);
      EXPECT_EQ(back.is_seeded(), form == CiphertextForm::kSeeded);
    }
  }
}

TEST_F(SerializationTest, PublicKeyRoundTrip) {
  const auto bytes = serialize_public_key(kit.params, kit.pk);
  EXPECT_EQ(*deserialize_public_key(kit.params, bytes), kit.pk);
}

TEST_F(SerializationTest, SeededFormOfAnEvaluatedCiphertextIsRefused) {
  auto ct = fresh(1);
  ASSERT_TRUE(kit.evaluator.negate_inplace(ct).ok());
  EXPECT_EQ(serialize_ciphertext(kit.params, ct, CiphertextForm::kSeeded).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(SerializationTest, GoldenDigestOfSeededOutput) {
  // Everything here is derived from named test seeds: a change in this digest means the
  // encoding, the samplers or the byte format changed, which must be deliberate.
  CkksKit golden(testing::insecure_params(64), 4242);
  const std::vector<double> v = {0.5, -0.25, 0.125};
  const auto bytes =
      *serialize_ciphertext(golden.params, golden.encrypt(v, 1), CiphertextForm::kSeeded);
  const auto pk_bytes = serialize_public_key(golden.params, golden.pk);
  EXPECT_EQ(to_hex(sha256(bytes)),
            "d39a3702bf5af5a8b853c7b9a1ddbccb7821c3b75fad78f364bb00b6a05f4b0b");
  EXPECT_EQ(to_hex(sha256(pk_bytes)),
            "b6ffc8b551bf976a4c4f12d7399ed8e98812b1b2f1167cdf3e1a1ddd544c393f");
}

TEST_F(SerializationTest, BadMagicIsRejected) {
  auto b = seeded_bytes(1);
  b[0] = 'X';
  EXPECT_EQ(deserialize_ciphertext(kit.params, b).status().code(), StatusCode::kDataLoss);
}

TEST_F(SerializationTest, UnknownFormatVersionIsRejected) {
  auto b = seeded_bytes(1);
  b[kVersionOffset] = 9;
  const auto r = deserialize_ciphertext(kit.params, b);
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("version"), std::string::npos);
}

TEST_F(SerializationTest, WrongObjectTypeIsRejected) {
  auto b = seeded_bytes(1);
  b[kTypeOffset] = static_cast<std::uint8_t>(ObjectType::kPublicKey);
  EXPECT_EQ(deserialize_ciphertext(kit.params, b).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(deserialize_public_key(kit.params, seeded_bytes(1)).status().code(),
            StatusCode::kDataLoss);
}

TEST_F(SerializationTest, ForeignParamsIdIsRejected) {
  auto b = seeded_bytes(1);
  b[kIdOffset] ^= 1;
  EXPECT_EQ(deserialize_ciphertext(kit.params, b).status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(SerializationTest, LevelAboveMaxIsRejectedBeforeAllocating) {
  auto b = seeded_bytes(1);
  b[kBodyOffset] = 200;
  EXPECT_EQ(deserialize_ciphertext(kit.params, b).status().code(), StatusCode::kDataLoss);
}

TEST_F(SerializationTest, NonFiniteOrTinyScaleIsRejected) {
  auto b = seeded_bytes(1);
  for (int i = 0; i < 8; ++i) b[kBodyOffset + 4 + static_cast<std::size_t>(i)] = 0xff;  // NaN
  EXPECT_EQ(deserialize_ciphertext(kit.params, b).status().code(), StatusCode::kDataLoss);
  auto c = seeded_bytes(1);
  for (int i = 0; i < 8; ++i) c[kBodyOffset + 4 + static_cast<std::size_t>(i)] = 0;  // 0.0
  EXPECT_EQ(deserialize_ciphertext(kit.params, c).status().code(), StatusCode::kDataLoss);
}

TEST_F(SerializationTest, UnknownCiphertextFormIsRejected) {
  auto b = seeded_bytes(1);
  b[kBodyOffset + 12] = 7;
  EXPECT_EQ(deserialize_ciphertext(kit.params, b).status().code(), StatusCode::kDataLoss);
}

TEST_F(SerializationTest, TruncatedCiphertextIsRejectedAtEveryLength) {
  const auto b = seeded_bytes(1);
  for (std::size_t len = 0; len < b.size(); len += 7) {
    const Bytes t(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(len));
    EXPECT_EQ(deserialize_ciphertext(kit.params, t).status().code(), StatusCode::kDataLoss) << len;
  }
}

TEST_F(SerializationTest, TrailingBytesAreRejected) {
  auto b = seeded_bytes(1);
  b.push_back(0);
  EXPECT_EQ(deserialize_ciphertext(kit.params, b).status().code(), StatusCode::kDataLoss);
  auto p = serialize_params(kit.params);
  p.push_back(0);
  EXPECT_EQ(deserialize_params(p).status().code(), StatusCode::kDataLoss);
}

TEST_F(SerializationTest, CoefficientOutOfRangeIsRejected) {
  // Level 0, q_0 has 50 bits: set the first packed coefficient to all ones (>= q_0).
  auto b = seeded_bytes(0);
  const std::size_t rows_at = kBodyOffset + 4 + 8 + 1;
  for (std::size_t i = 0; i < 6; ++i) b[rows_at + i] = 0xff;
  b[rows_at + 6] |= 0x03;
  const auto r = deserialize_ciphertext(kit.params, b);
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("not below the modulus"), std::string::npos);
}

TEST_F(SerializationTest, ParamsWithTamperedPrimeAreRejected) {
  auto b = serialize_params(kit.params);
  b[kBodyOffset + 4 + 1] ^= 0x02;  // first byte of q_0: no longer prime / NTT-friendly
  EXPECT_FALSE(deserialize_params(b).ok());
}

TEST_F(SerializationTest, ParamsWhoseIdDoesNotMatchAreRejected) {
  auto b = serialize_params(kit.params);
  b[kIdOffset] ^= 1;
  EXPECT_EQ(deserialize_params(b).status().code(), StatusCode::kDataLoss);
}

TEST_F(SerializationTest, FailedLoadLeavesTheTargetUntouched) {
  Ciphertext target = fresh(1);
  const Ciphertext before = target;
  auto b = seeded_bytes(1);
  b.pop_back();
  EXPECT_FALSE(load_into(deserialize_ciphertext(kit.params, b), target).ok());
  EXPECT_EQ(target, before);
  EXPECT_TRUE(load_into(deserialize_ciphertext(kit.params, seeded_bytes(0)), target).ok());
  EXPECT_EQ(target.level(), 0u);
}

TEST(SerializationSizes, PaperPresetSeededFreshCiphertextIsUnder110000Bytes) {
  CkksKit kit(testing::paper_params());
  const auto ct = kit.encrypt({0.5}, 1);
  const auto seeded = *serialize_ciphertext(kit.params, ct, CiphertextForm::kSeeded);
  const auto full = *serialize_ciphertext(kit.params, ct, CiphertextForm::kFull);
  EXPECT_LE(seeded.size(), 110000u);
  EXPECT_EQ(seeded.size(), 40u + 13u + 8192u * 100u / 8u + 32u);
  EXPECT_EQ(full.size(), 40u + 13u + 2u * 8192u * 100u / 8u);
}

}  // namespace
}  // namespace privsearch::ckks
