#include <gtest/gtest.h>

#include <cstring>

#include "core/constant_time.h"
#include "core/secure_buffer.h"
#include "core/sha256.h"

namespace privsearch {
namespace {

TEST(Sha256, MatchesFips180Vectors) {
  EXPECT_EQ(to_hex(sha256({})), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const std::string abc = "abc";
  EXPECT_EQ(to_hex(sha256({reinterpret_cast<const std::uint8_t*>(abc.data()), abc.size()})),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, IncrementalEqualsOneShot) {
  Sha256 h;
  h.update("a");
  h.update("bc");
  EXPECT_EQ(to_hex(h.finish()), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(ConstantTime, SelectAndCompare) {
  EXPECT_EQ(ct::select(1, 10, 20), 10u);
  EXPECT_EQ(ct::select(0, 10, 20), 20u);
  EXPECT_EQ(ct::is_zero(0), 1u);
  EXPECT_EQ(ct::is_zero(5), 0u);
  EXPECT_EQ(ct::equal(7, 7), 1u);
  EXPECT_EQ(ct::equal(7, 8), 0u);
  const std::uint64_t big = ~0ULL;
  EXPECT_EQ(ct::less_than(1, 2), 1u);
  EXPECT_EQ(ct::less_than(2, 1), 0u);
  EXPECT_EQ(ct::less_than(big - 1, big), 1u);
  EXPECT_EQ(ct::less_than(big, 0), 0u);
  EXPECT_EQ(ct::less_than(5, 5), 0u);
  const char a[] = "secret", b[] = "secret", c[] = "secreT";
  EXPECT_TRUE(ct::memory_equal(a, b, 6));
  EXPECT_FALSE(ct::memory_equal(a, c, 6));
}

TEST(SecureVector, IsMoveOnlyAndMovedFromIsEmpty) {
  static_assert(!std::is_copy_constructible_v<SecureVector<int>>);
  static_assert(std::is_nothrow_move_constructible_v<SecureVector<int>>);
  SecureVector<int> a(4);
  a[0] = 99;
  SecureVector<int> b = std::move(a);
  EXPECT_EQ(b[0], 99);
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): documented state
  SecureVector<int> c = b.clone();
  EXPECT_EQ(c[0], 99);
}

TEST(SecureZero, ClearsMemory) {
  char buf[16];
  std::memset(buf, 0x5a, sizeof(buf));
  secure_zero(buf, sizeof(buf));
  for (char ch : buf) EXPECT_EQ(ch, 0);
}

}  // namespace
}  // namespace privsearch
