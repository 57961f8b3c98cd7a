#include "protocol/key_cache.h"

#include <gtest/gtest.h>

namespace privsearch::protocol {
namespace {

KeyId id_of(std::uint8_t b) {
  KeyId id{};
  id[0] = b;
  return id;
}

std::shared_ptr<const EvaluationKeys> some_keys() {
  return std::make_shared<const EvaluationKeys>();
}

void put(KeyCache& cache, std::uint8_t id, std::uint64_t bytes) {
  auto r = cache.reserve(bytes);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  cache.insert(id_of(id), some_keys(), bytes, std::move(r).value());
}

TEST(KeyCacheTest, UnknownIdIsNotFound) {
  KeyCache cache(2, 1000);
  EXPECT_EQ(cache.find(id_of(1)).status().code(), StatusCode::kNotFound);
}

TEST(KeyCacheTest, LeastRecentlyUsedSetIsEvictedBeyondTheSetCount) {
  KeyCache cache(2, 1000);
  put(cache, 1, 10);
  put(cache, 2, 10);
  ASSERT_TRUE(cache.find(id_of(1)).ok());  // 1 is now the most recent
  put(cache, 3, 10);                       // evicts 2
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_TRUE(cache.find(id_of(1)).ok());
  EXPECT_EQ(cache.find(id_of(2)).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(cache.find(id_of(3)).ok());
  EXPECT_EQ(cache.cached_bytes(), 20u);
}

TEST(KeyCacheTest, BytesBoundEvictsTheLeastRecentlyUsed) {
  KeyCache cache(100, 100);
  put(cache, 1, 40);
  put(cache, 2, 40);
  ASSERT_TRUE(cache.find(id_of(1)).ok());
  put(cache, 3, 40);  // 120 > 100: evicts 2
  EXPECT_EQ(cache.cached_bytes(), 80u);
  EXPECT_EQ(cache.find(id_of(2)).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(cache.find(id_of(1)).ok());
}

// Memory given back after a churn of key sets: uploads no request used go after `unused_for`;
// used ones stay while the cache is within the working set, and idle ones go past it, least
// recently used first. (Durations of 0 and of a day stand for "already" and "not yet".)
TEST(KeyCacheTest, UnusedAndIdleSetsAreEvictedUsedOnesKept) {
  using std::chrono::hours;
  using std::chrono::seconds;
  KeyCache cache(100, 1000);
  put(cache, 1, 100);
  put(cache, 2, 100);
  put(cache, 3, 100);
  ASSERT_TRUE(cache.find(id_of(2)).ok());                     // used by a request
  EXPECT_EQ(cache.evict_idle(hours(24), hours(24), 0), 0u);   // nothing old enough yet
  EXPECT_EQ(cache.evict_idle(seconds(0), hours(24), 0), 2u);  // the unused 1 and 3
  EXPECT_TRUE(cache.find(id_of(2)).ok());
  EXPECT_EQ(cache.cached_bytes(), 100u);
  put(cache, 4, 100);
  ASSERT_TRUE(cache.find(id_of(4)).ok());
  ASSERT_TRUE(cache.find(id_of(2)).ok());  // 2 is now the most recent, 4 the least
  // Idle (0 s: all of them) but within the working set: kept.
  EXPECT_EQ(cache.evict_idle(hours(24), seconds(0), 200), 0u);
  // Past it: the least recently used goes until the cache is back within it.
  EXPECT_EQ(cache.evict_idle(hours(24), seconds(0), 150), 1u);
  EXPECT_EQ(cache.find(id_of(4)).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(cache.find(id_of(2)).ok());
}

TEST(KeyCacheTest, UploadsInProgressCountAndAreRefusedWhenTheyFillTheCache) {
  KeyCache cache(100, 100);
  put(cache, 1, 30);
  auto a = cache.reserve(50);  // evicts nothing yet: 80 of 100
  ASSERT_TRUE(a.ok());
  auto b = cache.reserve(40);  // 30 cached + 50 + 40 > 100: set 1 is evicted, then it fits
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.reserved_bytes(), 90u);
  // Only reservations left, no set to evict: refused before any decoding.
  EXPECT_EQ(cache.reserve(20).status().code(), StatusCode::kResourceExhausted);
  { auto drop = std::move(a).value(); }  // an upload failed: its reservation returns
  EXPECT_EQ(cache.reserved_bytes(), 40u);
  EXPECT_TRUE(cache.reserve(20).ok());
  // One set above the whole bound is refused outright.
  EXPECT_EQ(cache.reserve(101).status().code(), StatusCode::kResourceExhausted);
}

TEST(KeyCacheTest, ReinsertingAnIdRefreshesWithoutDoubleCounting) {
  KeyCache cache(4, 100);
  put(cache, 1, 30);
  put(cache, 1, 30);
  EXPECT_EQ(cache.cached_bytes(), 30u);
  EXPECT_EQ(cache.reserved_bytes(), 0u);
  EXPECT_EQ(cache.size(), 1u);
}

}  // namespace
}  // namespace privsearch::protocol
