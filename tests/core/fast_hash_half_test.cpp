// core/fast_hash.h and core/half.h: the fingerprint sees every byte and the length; the F16C
// widening equals the scalar path for all 65,536 halves, and both conversions equal the
// compiler's _Float16 where it has one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>
#include <vector>

#include "core/csprng.h"
#include "core/fast_hash.h"
#include "core/half.h"
#include "testing/test_util.h"

namespace privsearch {
namespace {

TEST(FastHash, EveryByteFlipAndLengthChangesIt) {
  Prng prng = Prng::from_seed(Seed{7});
  for (const std::size_t n : {0u, 1u, 2u, 3u, 31u, 32u, 33u, 64u, 1344u, 52001u}) {
    std::vector<std::uint8_t> data(n);
    prng.fill(data);
    const auto h = fast_hash(data.data(), n, 5);
    EXPECT_EQ(h, fast_hash(data.data(), n, 5));  // deterministic
    EXPECT_NE(h, fast_hash(data.data(), n, 6)) << "seed ignored, n = " << n;
    for (std::size_t i = 0; i < n; i += std::max<std::size_t>(1, n / 97)) {
      for (const unsigned bit : {1u, 128u}) {
        data[i] = static_cast<std::uint8_t>(data[i] ^ bit);
        EXPECT_NE(fast_hash(data.data(), n, 5), h) << "byte " << i << " of " << n;
        data[i] = static_cast<std::uint8_t>(data[i] ^ bit);
      }
    }
    // A trailing zero byte (one more byte of an all-zero tail) changes it.
    std::vector<std::uint8_t> longer = data;
    longer.push_back(0);
    EXPECT_NE(fast_hash(longer.data(), n + 1, 5), h) << "n = " << n;
  }
}

TEST(Half, F16cWideningEqualsTheScalarPathForEveryHalf) {
  std::vector<std::uint8_t> raw(2 * 65536);
  for (std::uint32_t v = 0; v < 65536; ++v) {
    raw[2 * v] = static_cast<std::uint8_t>(v);
    raw[2 * v + 1] = static_cast<std::uint8_t>(v >> 8);
  }
  std::vector<float> scalar(65536), fast(65536), dispatched(65536);
  detail::halves_to_floats_scalar(raw.data(), scalar.data(), 65536);
  halves_to_floats(raw.data(), dispatched.data(), 65536);
  // Known answers: 1.0, -2.0, the largest half, the smallest subnormal, infinity.
  EXPECT_EQ(scalar[0x3c00], 1.0f);
  EXPECT_EQ(scalar[0xc000], -2.0f);
  EXPECT_EQ(scalar[0x7bff], 65504.0f);
  EXPECT_EQ(scalar[0x0001], std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isinf(scalar[0x7c00]));
  auto same = [](float a, float b) {
    return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, 4) == 0;
  };
  for (std::uint32_t v = 0; v < 65536; ++v) ASSERT_TRUE(same(dispatched[v], scalar[v])) << v;
  if (!detail::f16c_available()) GTEST_SKIP() << "no F16C on this CPU";
  // Odd lengths exercise the scalar tail after the 8-wide part.
  detail::halves_to_floats_f16c(raw.data(), fast.data(), 65531);
  for (std::uint32_t v = 0; v < 65531; ++v) ASSERT_TRUE(same(fast[v], scalar[v])) << v;
}

#if defined(__FLT16_MAX__)
// The bit-arithmetic conversions against the compiler's _Float16 (GCC on x86-64): every half
// widened, and floats rounded at every tie, next to it, and across every exponent.
bool same_half(std::uint16_t a, std::uint16_t b) {
  const bool a_nan = (a & 0x7c00) == 0x7c00 && (a & 0x3ff) != 0;
  const bool b_nan = (b & 0x7c00) == 0x7c00 && (b & 0x3ff) != 0;
  return a_nan || b_nan ? a_nan && b_nan : a == b;
}

std::uint16_t compiler_half(float v) {
  const _Float16 h = static_cast<_Float16>(v);
  std::uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}

TEST(Half, ConversionsEqualTheCompilersFloat16) {
  for (std::uint32_t v = 0; v < 65536; ++v) {
    const auto bits = static_cast<std::uint16_t>(v);
    _Float16 h;
    std::memcpy(&h, &bits, 2);
    const float want = static_cast<float>(h), got = half_bits_to_float(bits);
    ASSERT_TRUE((std::isnan(want) && std::isnan(got)) || std::memcmp(&want, &got, 4) == 0) << v;
    ASSERT_TRUE(same_half(float_to_half_bits(got), bits)) << v;
  }
  // Ties between neighbouring halves (and one float-ulp either side): round to even.
  for (std::uint32_t v = 0; v < 0x7c00; ++v) {
    const float lo = half_bits_to_float(static_cast<std::uint16_t>(v));
    const float hi =
        v + 1 == 0x7c00 ? 65536.0f : half_bits_to_float(static_cast<std::uint16_t>(v + 1));
    const float mid = lo + (hi - lo) / 2;
    for (const float x : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f), -mid}) {
      ASSERT_TRUE(same_half(float_to_half_bits(x), compiler_half(x))) << x;
    }
  }
  Prng prng = testing::test_prng(77);
  for (int i = 0; i < 1000000; ++i) {
    std::uint32_t b = static_cast<std::uint32_t>(prng.next_u64());
    float x;
    std::memcpy(&x, &b, 4);
    ASSERT_TRUE(same_half(float_to_half_bits(x), compiler_half(x))) << b;
  }
  for (const float x : {0.0f, -0.0f, 65504.0f, 65519.0f, 65520.0f, 1e30f, -1e30f, 0x1p-25f,
                        0x1.000002p-25f, 0x1p-24f, 0x1p-14f, 0x1.ffcp-15f}) {
    EXPECT_TRUE(same_half(float_to_half_bits(x), compiler_half(x))) << x;
  }
}
#else
TEST(Half, ConversionsEqualTheCompilersFloat16) {
  GTEST_SKIP() << "this compiler has no _Float16 to compare with";
}
#endif

}  // namespace
}  // namespace privsearch
