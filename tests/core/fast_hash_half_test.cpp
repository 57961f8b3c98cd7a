// core/fast_hash.h and core/half.h: the fingerprint sees every byte and the length; the F16C
// widening equals the compiler's conversion for all 65,536 halves.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>
#include <vector>

#include "core/csprng.h"
#include "core/fast_hash.h"
#include "core/half.h"

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

TEST(Half, F16cWideningEqualsTheCompilersForEveryHalf) {
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

}  // namespace
}  // namespace privsearch
