// The client's on-disk segment cache (client/segment_cache.h): content addressing, the byte
// bound with least-recently-used eviction (also across reopenings), and files it cannot trust.
#include "client/segment_cache.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/bytes.h"
#include "testing/test_util.h"

namespace privsearch::client {
namespace {

namespace fs = std::filesystem;

struct Blob {
  std::string bytes;
  Sha256Digest sha;
};

Blob blob(char fill, std::size_t size) {
  Blob b{std::string(size, fill), {}};
  b.sha = sha256(byte_view(b.bytes));
  return b;
}

class SegmentCacheTest : public ::testing::Test {
 protected:
  void TearDown() override { fs::remove_all(dir); }
  fs::path dir = testing::temp_dir("segment-cache");
};

TEST_F(SegmentCacheTest, KeepsSegmentsByTheirHash) {
  auto cache = *SegmentCache::open(dir / "c", 1000);
  const auto a = blob('a', 100);
  EXPECT_FALSE(cache.get(a.sha).has_value());
  ASSERT_TRUE(cache.put(a.sha, a.bytes).ok());
  EXPECT_EQ(cache.get(a.sha), a.bytes);
  EXPECT_EQ(cache.bytes(), 100u);
  EXPECT_EQ(cache.entries(), 1u);
  EXPECT_TRUE(fs::exists(dir / "c" / (to_hex(a.sha) + ".seg")));
  EXPECT_EQ(fs::status(dir / "c").permissions() & fs::perms::all, fs::perms::owner_all);
  // Bytes that do not hash to the name are refused.
  EXPECT_EQ(cache.put(a.sha, "other").code(), StatusCode::kInvalidArgument);
  // Putting again changes nothing.
  ASSERT_TRUE(cache.put(a.sha, a.bytes).ok());
  EXPECT_EQ(cache.bytes(), 100u);
}

TEST_F(SegmentCacheTest, EvictsTheLeastRecentlyUsedAlsoAfterReopening) {
  const auto a = blob('a', 400), b = blob('b', 400), c = blob('c', 400), d = blob('d', 400);
  {
    auto cache = *SegmentCache::open(dir, 1000);
    ASSERT_TRUE(cache.put(a.sha, a.bytes).ok());
    ASSERT_TRUE(cache.put(b.sha, b.bytes).ok());
    EXPECT_TRUE(cache.get(a.sha).has_value());    // a is now more recent than b
    ASSERT_TRUE(cache.put(c.sha, c.bytes).ok());  // 1200 > 1000: b goes
    EXPECT_FALSE(cache.get(b.sha).has_value());
    EXPECT_TRUE(cache.get(a.sha).has_value());
    EXPECT_TRUE(cache.get(c.sha).has_value());  // order now: a, then c (most recent)
    EXPECT_EQ(cache.bytes(), 800u);
    // A segment above the whole bound is not kept.
    const auto huge = blob('h', 1001);
    ASSERT_TRUE(cache.put(huge.sha, huge.bytes).ok());
    EXPECT_FALSE(cache.get(huge.sha).has_value());
  }
  // Recency survives as modification times: a is older than c.
  const auto t = fs::file_time_type::clock::now();
  fs::last_write_time(dir / (to_hex(a.sha) + ".seg"), t - std::chrono::seconds(60));
  fs::last_write_time(dir / (to_hex(c.sha) + ".seg"), t - std::chrono::seconds(30));
  auto cache = *SegmentCache::open(dir, 1000);
  EXPECT_EQ(cache.entries(), 2u);
  ASSERT_TRUE(cache.put(d.sha, d.bytes).ok());
  EXPECT_FALSE(cache.get(a.sha).has_value());
  EXPECT_TRUE(cache.get(c.sha).has_value());
  // Reopened with a smaller bound: trimmed at once.
  auto small = *SegmentCache::open(dir, 500);
  EXPECT_EQ(small.entries(), 1u);
  EXPECT_LE(small.bytes(), 500u);
}

TEST_F(SegmentCacheTest, DamagedOrVanishedFilesAreMissesAndOtherFilesAreLeftAlone) {
  const auto a = blob('a', 100), b = blob('b', 100);
  std::ofstream(dir / "notes.txt") << "mine";
  auto cache = *SegmentCache::open(dir, 1000);
  EXPECT_EQ(cache.entries(), 0u);
  ASSERT_TRUE(cache.put(a.sha, a.bytes).ok());
  ASSERT_TRUE(cache.put(b.sha, b.bytes).ok());
  std::ofstream(dir / (to_hex(a.sha) + ".seg"), std::ios::binary) << "tampered";
  EXPECT_FALSE(cache.get(a.sha).has_value());
  EXPECT_FALSE(fs::exists(dir / (to_hex(a.sha) + ".seg")));
  fs::remove(dir / (to_hex(b.sha) + ".seg"));
  EXPECT_FALSE(cache.get(b.sha).has_value());
  EXPECT_EQ(cache.entries(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
  EXPECT_TRUE(fs::exists(dir / "notes.txt"));
}

TEST_F(SegmentCacheTest, RefusesImpossibleSettings) {
  EXPECT_EQ(SegmentCache::open(dir, 0).status().code(), StatusCode::kInvalidArgument);
  std::ofstream(dir / "file") << "x";
  EXPECT_EQ(SegmentCache::open(dir / "file", 10).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace privsearch::client
