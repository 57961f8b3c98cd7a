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

TEST(KeyCacheTest, UnknownIdIsNotFound) {
  KeyCache cache(2, 10);
  EXPECT_EQ(cache.acquire(id_of(1)).status().code(), StatusCode::kNotFound);
}

TEST(KeyCacheTest, LeastRecentlyUsedSetIsEvicted) {
  KeyCache cache(2, 10);
  cache.insert(id_of(1), some_keys());
  cache.insert(id_of(2), some_keys());
  ASSERT_TRUE(cache.acquire(id_of(1)).ok());  // 1 is now the most recent
  cache.insert(id_of(3), some_keys());        // evicts 2
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_TRUE(cache.acquire(id_of(1)).ok());
  EXPECT_EQ(cache.acquire(id_of(2)).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(cache.acquire(id_of(3)).ok());
}

TEST(KeyCacheTest, BudgetCountsDownAndSurvivesReupload) {
  KeyCache cache(1, 3);
  EXPECT_EQ(cache.insert(id_of(1), some_keys()), 3u);
  EXPECT_EQ(cache.acquire(id_of(1)).value().remaining, 2u);
  EXPECT_EQ(cache.acquire(id_of(1)).value().remaining, 1u);
  cache.insert(id_of(2), some_keys());  // evicts 1
  EXPECT_EQ(cache.insert(id_of(1), some_keys()), 1u);  // the spent count was kept
  EXPECT_EQ(cache.acquire(id_of(1)).value().remaining, 0u);
  EXPECT_EQ(cache.acquire(id_of(1)).status().code(), StatusCode::kResourceExhausted);
}

TEST(KeyCacheTest, BudgetMemoryIsBounded) {
  KeyCache cache(1, 5, /*budget_memory=*/2);
  for (std::uint8_t i = 1; i <= 4; ++i) {
    cache.insert(id_of(i), some_keys());
    ASSERT_TRUE(cache.acquire(id_of(i)).ok());
  }
  // Id 1 was forgotten (only the two most recent counts are kept): a full budget again.
  EXPECT_EQ(cache.insert(id_of(1), some_keys()), 5u);
  EXPECT_EQ(cache.insert(id_of(4), some_keys()), 4u);
}

}  // namespace
}  // namespace privsearch::protocol
