#include "ckks/encoder.h"

#include <gtest/gtest.h>

#include "ckks/internal/poly_util.h"
#include "testing/reference.h"
#include "testing/test_util.h"

namespace privsearch::ckks {
namespace {

TEST(Encoder, SlotsAreTheCanonicalEmbeddingOrderedByPowersOfFive) {
  // Decode a known polynomial and compare with direct evaluation at zeta^(5^j).
  const Params params = testing::insecure_params(32);
  const Encoder enc = *Encoder::create(params);
  const std::size_t n = params.n();
  std::vector<double> m(n);
  for (std::size_t k = 0; k < n; ++k) m[k] = static_cast<double>(static_cast<int>(k % 7) - 3);
  const double scale = 1024.0;
  const auto rows = key_rows(params, 0, false);
  ring::RnsPoly poly(n, 1, false);
  for (std::size_t k = 0; k < n; ++k) {
    poly.row(0)[k] = params.key_moduli()[0].from_signed(static_cast<std::int64_t>(m[k] * scale));
  }
  to_ntt(params, rows, poly);
  const Plaintext pt(params.id(), 0, scale, std::move(poly));
  const auto slots = *enc.decode_complex(pt);
  const auto expected = testing::ref_embed(m);
  for (std::size_t j = 0; j < n / 2; ++j) {
    EXPECT_NEAR(slots[j].real(), expected[j].real(), 1e-9) << j;
    EXPECT_NEAR(slots[j].imag(), expected[j].imag(), 1e-9) << j;
  }
}

TEST(Encoder, EncodeDecodeRoundTripKeepsThirtyBitsAtScale2To40) {
  for (const Params& params : {testing::paper_params(), testing::ifma_params()}) {
    const Encoder enc = *Encoder::create(params);
    Prng prng = testing::test_prng(61);
    for (std::size_t level = 0; level <= params.max_level(); ++level) {
      const auto values = testing::random_values(prng, params.slots());
      const auto pt = *enc.encode(values, level, params.default_scale());
      const auto back = *enc.decode(pt);
      EXPECT_GE(testing::precision_bits(values, back), 30.0) << params.name() << " " << level;
    }
  }
}

TEST(Encoder, ComplexValuesRoundTrip) {
  const Params params = testing::insecure_params(64);
  const Encoder enc = *Encoder::create(params);
  std::vector<std::complex<double>> v(params.slots());
  for (std::size_t j = 0; j < v.size(); ++j) v[j] = {0.01 * double(j), -0.5 + 0.003 * double(j)};
  const auto back = *enc.decode_complex(*enc.encode(v, 1, std::ldexp(1.0, 40)));
  for (std::size_t j = 0; j < v.size(); ++j) EXPECT_LT(std::abs(back[j] - v[j]), 1e-9);
}

TEST(Encoder, PairEncodingMatchesTwoSingleEncodings) {
  const Params params = testing::ifma_params();
  const Encoder enc = *Encoder::create(params);
  Prng prng = testing::test_prng(62);
  const auto a = testing::random_values(prng, params.slots());
  const auto b = testing::random_values(prng, 1000);  // shorter: zero padded
  const auto [pa, pb] = *enc.encode_pair(a, b, 2, params.default_scale());
  const auto da = *enc.decode(pa), db = *enc.decode(pb);
  EXPECT_GE(testing::precision_bits(a, da), 30.0);
  std::vector<double> b_full(params.slots(), 0.0);
  std::copy(b.begin(), b.end(), b_full.begin());
  EXPECT_GE(testing::precision_bits(b_full, db), 30.0);
  // Coefficients agree with single encodings up to a rounding tie in rare positions.
  const auto sa = *enc.encode(a, 2, params.default_scale());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < pa.poly().data().size(); ++i)
    differ += pa.poly().data()[i] != sa.poly().data()[i];
  EXPECT_LT(differ, pa.poly().data().size() / 100);
}

TEST(Encoder, ShortInputsAreZeroPadded) {
  const Params params = testing::insecure_params(64);
  const Encoder enc = *Encoder::create(params);
  const std::vector<double> v = {1.0, -2.0, 3.5};
  const auto back = *enc.decode(*enc.encode(v, 0, std::ldexp(1.0, 30)));
  EXPECT_NEAR(back[0], 1.0, 1e-6);
  EXPECT_NEAR(back[2], 3.5, 1e-6);
  for (std::size_t j = 3; j < back.size(); ++j) EXPECT_NEAR(back[j], 0.0, 1e-6);
}

TEST(Encoder, TooManyValuesIsRejected) {
  const Params params = testing::insecure_params(16);
  const Encoder enc = *Encoder::create(params);
  const std::vector<double> v(9, 1.0);
  EXPECT_EQ(enc.encode(v, 0, 1024).status().code(), StatusCode::kInvalidArgument);
}

TEST(Encoder, NonFiniteValueIsRejected) {
  const Params params = testing::insecure_params(16);
  const Encoder enc = *Encoder::create(params);
  const std::vector<double> v = {1.0, std::nan("")};
  EXPECT_EQ(enc.encode(v, 0, 1024).status().code(), StatusCode::kInvalidArgument);
}

TEST(Encoder, CoefficientOverflowIsOutOfRange) {
  const Params params = testing::insecure_params(16);
  const Encoder enc = *Encoder::create(params);
  const std::vector<double> v = {1e12};
  EXPECT_EQ(enc.encode(v, 0, std::ldexp(1.0, 55)).status().code(), StatusCode::kOutOfRange);
}

TEST(Encoder, BadLevelOrScaleIsRejected) {
  const Params params = testing::insecure_params(16);
  const Encoder enc = *Encoder::create(params);
  const std::vector<double> v = {1.0};
  EXPECT_EQ(enc.encode(v, 3, 1024).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(enc.encode(v, 0, 0.5).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace privsearch::ckks
