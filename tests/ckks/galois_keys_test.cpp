#include "ckks/galois_keys.h"

#include <gtest/gtest.h>

#include "ckks/internal/poly_util.h"
#include "ckks/serialization.h"
#include "ckks_fixture.h"
#include "core/sha256.h"

namespace privsearch::ckks {
namespace {

using testing::CkksKit;
using Bytes = std::vector<std::uint8_t>;

class GaloisKeysTest : public ::testing::Test {
 protected:
  GaloisKeysTest() : kit(testing::insecure_params(64), 401) {
    const std::vector<int> steps = {1, 4, 31};
    keys = *kit.keygen.create_galois_keys(kit.sk, steps, true, kit.prng);
    bytes = serialize_galois_keys(kit.params, keys);
  }
  CkksKit kit;
  GaloisKeys keys;
  Bytes bytes;
};

TEST_F(GaloisKeysTest, KeySetCarriesItsStepsAndParamsId) {
  EXPECT_EQ(keys.steps(), (std::vector<int>{1, 4, 31}));
  EXPECT_TRUE(keys.has_conjugate());
  EXPECT_EQ(keys.size(), 4u);
  EXPECT_EQ(keys.params_id(), kit.params.id());
}

TEST_F(GaloisKeysTest, SerializationRoundTrip) {
  const auto back = *deserialize_galois_keys(kit.params, bytes);
  EXPECT_EQ(back, keys);
  // And the round-tripped keys still rotate correctly.
  const std::vector<double> v = {1, 2, 3, 4};
  const auto r = *kit.evaluator.rotate(kit.encrypt(v, 1), 1, back);
  EXPECT_NEAR(kit.decrypt(r)[0], 2.0, 1e-6);
}

TEST_F(GaloisKeysTest, SeededFormIsAboutHalfTheUnseededSize) {
  // An unseeded key would also carry every a_j: the same number of packed rows again.
  const auto rows = key_rows(kit.params, kit.params.max_level(), true);
  const std::size_t half = keys.size() * kit.params.num_q() * packed_rows_bytes(kit.params, rows);
  const std::size_t unseeded = bytes.size() + half;
  EXPECT_LT(static_cast<double>(bytes.size()), 0.52 * static_cast<double>(unseeded));
  EXPECT_GT(static_cast<double>(bytes.size()), 0.48 * static_cast<double>(unseeded));
}

TEST_F(GaloisKeysTest, GoldenDigestOfSeededKeys) {
  CkksKit golden(testing::insecure_params(64), 4243);
  const std::vector<int> steps = {1, 2};
  const auto gk = *golden.keygen.create_galois_keys(golden.sk, steps, false, golden.prng);
  EXPECT_EQ(to_hex(sha256(serialize_galois_keys(golden.params, gk))),
            "b023a89aa8f625ef4cc8a310a323614220f2672835157f2540dad3d9aff87262");
}

TEST_F(GaloisKeysTest, WrongParamsIdIsRejected) {
  Bytes b = bytes;
  b[8] ^= 1;
  EXPECT_EQ(deserialize_galois_keys(kit.params, b).status().code(),
            StatusCode::kFailedPrecondition);
}

TEST_F(GaloisKeysTest, TruncatedKeySetIsRejected) {
  for (std::size_t len :
       {std::size_t{0}, std::size_t{39}, std::size_t{45}, bytes.size() / 2, bytes.size() - 1}) {
    const Bytes t(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(len));
    EXPECT_EQ(deserialize_galois_keys(kit.params, t).status().code(), StatusCode::kDataLoss) << len;
  }
}

TEST_F(GaloisKeysTest, CoefficientOutOfRangeIsRejected) {
  Bytes b = bytes;
  // First key's first b row starts after header(40) + count(4) + flag(1) + elt(8) + step(4) +
  // seed(32); q_0 has 50 bits: all-ones in the first 50 bits is >= q_0.
  const std::size_t at = 40 + 4 + 1 + 8 + 4 + 32;
  for (std::size_t i = 0; i < 6; ++i) b[at + i] = 0xff;
  b[at + 6] |= 0x03;
  const auto r = deserialize_galois_keys(kit.params, b);
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("not below the modulus"), std::string::npos);
}

TEST_F(GaloisKeysTest, MismatchedStepAndElementIsRejected) {
  Bytes b = bytes;
  const std::size_t step_at = 40 + 4 + 1 + 8;
  b[step_at] ^= 0x02;
  EXPECT_EQ(deserialize_galois_keys(kit.params, b).status().code(), StatusCode::kDataLoss);
}

TEST_F(GaloisKeysTest, TooManyKeysIsResourceExhaustedBeforeAllocating) {
  Bytes b = bytes;
  b[40] = 0xff;
  b[41] = 0xff;
  b[42] = 0xff;
  EXPECT_EQ(deserialize_galois_keys(kit.params, b).status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(deserialize_galois_keys(kit.params, bytes, 2).status().code(),
            StatusCode::kResourceExhausted);
}

TEST_F(GaloisKeysTest, FailedLoadLeavesTheTargetUntouched) {
  GaloisKeys target = keys;
  Bytes b = bytes;
  b.push_back(0);
  EXPECT_FALSE(load_into(deserialize_galois_keys(kit.params, b), target).ok());
  EXPECT_EQ(target, keys);
}

TEST(GaloisKeySizes, PaperPresetSeededKeyIsUnder400000BytesPerStep) {
  CkksKit kit(testing::paper_params(), 402);
  const std::vector<int> steps = {1};
  const auto gk = *kit.keygen.create_galois_keys(kit.sk, steps, false, kit.prng);
  const auto b = serialize_galois_keys(kit.params, gk);
  EXPECT_LE(b.size(), 400000u);
  // 2 digits x (60 + 40 + 60) bits x 8192 coefficients, plus framing.
  EXPECT_EQ(b.size(), 40u + 5u + 44u + 2u * 8192u * 160u / 8u);
}

}  // namespace
}  // namespace privsearch::ckks
