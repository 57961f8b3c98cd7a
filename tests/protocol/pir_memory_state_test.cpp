// The in-process registration and hint store (protocol/pir_memory_state.h): the Redis store's
// contract (pir_shared_test.cpp's TheStoreHandsOutIndicesOnceAndHintsOnce, step for step), and
// what only it does: retired setups refused, hints per version, fair scheduling between owners,
// eviction when full, a stop that wakes the workers.
#include "protocol/pir_memory_state.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "protocol/pir_store_contract.h"

namespace privsearch::protocol {
namespace {

PirSharedLimits limits_with(std::size_t ready_per_client) {
  PirSharedLimits limits;
  limits.ready_per_client = ready_per_client;
  return limits;
}

TEST(PirMemoryState, HandsOutIndicesOnceAndHintsOnceLikeTheRedisStore) {
  auto state = make_memory_pir_state(limits_with(2));
  testing_contract::expect_indices_once_and_hints_once(*state, 0);
}

TEST(PirMemoryState, ANewVersionDropsTheOldHintsButNotTheCounter) {
  auto state = make_memory_pir_state(limits_with(1));
  ASSERT_TRUE(state->register_client(1, "s", "v1", "a").ok());
  const auto w = *state->next_work("v1", 0);
  ASSERT_TRUE(w);
  ASSERT_TRUE(state->deliver(*w, "v1", "old").ok());
  EXPECT_EQ((*state->ready(1, "v1"))->size(), 1u);
  // The worker asks for the new version's work: every client owes a hint again.
  const auto again = *state->next_work("v2", 0);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->index, 1u);
  EXPECT_TRUE((*state->ready(1, "v2"))->empty());
  EXPECT_EQ(state->take_hint(1, "v2", 0).status().code(), StatusCode::kFailedPrecondition);
  // A late delivery for the old version is dropped, not served under the new one.
  ASSERT_TRUE(state->deliver(*w, "v1", "late").ok());
  EXPECT_TRUE((*state->ready(1, "v2"))->empty());
}

TEST(PirMemoryState, ForgottenRegistrationsAreRetiredAndAFullStoreEvictsOnlyIdleOnes) {
  PirSharedLimits limits;
  limits.max_clients = 2;
  limits.evict_idle_after_s = 0;
  auto now = std::chrono::steady_clock::now();
  limits.clock = [&now] { return now; };
  auto state = make_memory_pir_state(limits);
  ASSERT_TRUE(state->register_client(1, "s1", "v1", "a").ok());
  now += std::chrono::milliseconds(5);
  ASSERT_TRUE(state->register_client(2, "s2", "v1", "a").ok());
  ASSERT_TRUE(state->register_client(3, "s3", "v1", "a").ok());  // evicts 1, the oldest
  EXPECT_FALSE(state->ready(1, "v1")->has_value());
  const Status back = state->register_client(1, "s1", "v1", "a");
  EXPECT_EQ(back.code(), StatusCode::kNotFound);  // its indices would start at 0 again
  EXPECT_NE(back.message().find("new key"), std::string::npos);
  limits.evict_idle_after_s = 3600;
  auto busy = make_memory_pir_state(limits);
  ASSERT_TRUE(busy->register_client(1, "s1", "v1", "a").ok());
  ASSERT_TRUE(busy->register_client(2, "s2", "v1", "a").ok());
  EXPECT_EQ(busy->register_client(3, "s3", "v1", "a").code(), StatusCode::kResourceExhausted);
}

TEST(PirMemoryState, WorkIsFairBetweenOwnersNotRegistrations) {
  auto state = make_memory_pir_state(limits_with(3));
  for (std::uint64_t c = 1; c <= 8; ++c) {
    ASSERT_TRUE(state->register_client(c, "m", "v1", "identity:mallory").ok());
  }
  ASSERT_TRUE(state->register_client(100, "a", "v1", "identity:alice").ok());
  // Mallory's eight registrations are served first only until alice's turn: at most one of
  // theirs comes before alice's first hint.
  std::size_t before_alice = 0;
  for (int i = 0; i < 4; ++i) {
    const auto w = *state->next_work("v1", 0);
    ASSERT_TRUE(w);
    if (w->client == 100) break;
    ++before_alice;
  }
  EXPECT_LE(before_alice, 1u);
}

TEST(PirMemoryState, InterruptWakesAWaitingWorker) {
  auto state = make_memory_pir_state(limits_with(1));
  const auto t0 = std::chrono::steady_clock::now();
  std::thread worker([&] { EXPECT_FALSE(state->next_work("v1", 30)->has_value()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  state->interrupt();
  worker.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  EXPECT_FALSE(state->next_work("v1", 30)->has_value());  // returns at once from now on
}

}  // namespace
}  // namespace privsearch::protocol
