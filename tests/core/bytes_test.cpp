#include "core/bytes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/csprng.h"

namespace privsearch {
namespace {

TEST(ByteWriterReader, IntegersRoundTripLittleEndian) {
  ByteWriter w;
  w.put_u8(0xab);
  w.put_u16(0x1234);
  w.put_u32(0xdeadbeef);
  w.put_u64(0x0123456789abcdefULL);
  w.put_f64(-1.5);
  w.put_string("hello");
  const auto& b = w.bytes();
  EXPECT_EQ(b[1], 0x34);  // little-endian
  EXPECT_EQ(b[2], 0x12);
  ByteReader r(b);
  std::uint8_t a8;
  std::uint16_t a16;
  std::uint32_t a32;
  std::uint64_t a64;
  double d;
  std::string s;
  ASSERT_TRUE(r.get_u8(a8).ok());
  ASSERT_TRUE(r.get_u16(a16).ok());
  ASSERT_TRUE(r.get_u32(a32).ok());
  ASSERT_TRUE(r.get_u64(a64).ok());
  ASSERT_TRUE(r.get_f64(d).ok());
  ASSERT_TRUE(r.get_string(s, 10).ok());
  EXPECT_EQ(a8, 0xab);
  EXPECT_EQ(a16, 0x1234);
  EXPECT_EQ(a32, 0xdeadbeefu);
  EXPECT_EQ(a64, 0x0123456789abcdefULL);
  EXPECT_EQ(d, -1.5);
  EXPECT_EQ(s, "hello");
  EXPECT_TRUE(r.expect_end().ok());
}

TEST(ByteReader, TruncatedInputIsDataLossWithOffset) {
  const std::uint8_t b[3] = {1, 2, 3};
  ByteReader r(b);
  std::uint32_t v = 7;
  const Status s = r.get_u32(v);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("offset 0"), std::string::npos);
  EXPECT_EQ(v, 7u);  // untouched
}

TEST(ByteReader, TrailingBytesAreRejected) {
  const std::uint8_t b[2] = {1, 2};
  ByteReader r(b);
  std::uint8_t v;
  ASSERT_TRUE(r.get_u8(v).ok());
  EXPECT_EQ(r.expect_end().code(), StatusCode::kDataLoss);
}

TEST(ByteReader, NonFiniteDoubleIsRejected) {
  ByteWriter w;
  w.put_f64(std::numeric_limits<double>::quiet_NaN());
  w.put_f64(std::numeric_limits<double>::infinity());
  ByteReader r(w.bytes());
  double d;
  EXPECT_EQ(r.get_f64(d).code(), StatusCode::kDataLoss);
  EXPECT_EQ(r.get_f64(d).code(), StatusCode::kDataLoss);
}

TEST(ByteReader, StringLongerThanLimitIsRejectedBeforeReading) {
  ByteWriter w;
  w.put_u32(1u << 30);  // declares a gigabyte
  ByteReader r(w.bytes());
  std::string s;
  EXPECT_EQ(r.get_string(s, 100).code(), StatusCode::kDataLoss);
}

TEST(PackedArrays, RoundTripForEveryWidth) {
  Prng prng = Prng::from_seed(Seed{}, 1);
  for (int bits = 1; bits <= 64; ++bits) {
    const std::uint64_t mask = bits == 64 ? ~0ULL : (1ULL << bits) - 1;
    std::vector<std::uint64_t> v(37);
    for (auto& x : v) x = prng.next_u64() & mask;
    ByteWriter w;
    w.put_packed(v, bits);
    EXPECT_EQ(w.size(), packed_bytes(v.size(), bits));
    std::vector<std::uint64_t> back(v.size());
    ByteReader r(w.bytes());
    ASSERT_TRUE(r.get_packed(back, bits, bits == 64 ? ~0ULL : mask + 1, "test").ok()) << bits;
    EXPECT_EQ(back, v) << "bits = " << bits;
    EXPECT_TRUE(r.expect_end().ok());
  }
}

TEST(PackedArrays, ValueAtOrAboveBoundIsRejected) {
  std::vector<std::uint64_t> v = {1, 2, 97};
  ByteWriter w;
  w.put_packed(v, 7);
  std::vector<std::uint64_t> back(3);
  ByteReader r(w.bytes());
  const Status s = r.get_packed(back, 7, 97, "coefficients");
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("element 2"), std::string::npos);
}

TEST(PackedArrays, NonzeroPaddingBitsAreRejected) {
  std::vector<std::uint64_t> v = {5};
  ByteWriter w;
  w.put_packed(v, 3);
  auto bytes = w.take();
  bytes[0] |= 0x80;  // a padding bit
  std::vector<std::uint64_t> back(1);
  ByteReader r(bytes);
  EXPECT_EQ(r.get_packed(back, 3, 8, "x").code(), StatusCode::kDataLoss);
}

TEST(CheckedArithmetic, DetectsOverflow) {
  std::size_t out = 0;
  EXPECT_FALSE(checked_mul(std::numeric_limits<std::size_t>::max(), 2, out));
  EXPECT_TRUE(checked_mul(1000, 1000, out));
  EXPECT_EQ(out, 1000000u);
  EXPECT_FALSE(checked_add(std::numeric_limits<std::size_t>::max(), 1, out));
}

}  // namespace
}  // namespace privsearch
