// The contract every PirSharedState implementation keeps (protocol/pir_shared_state.h), run on
// the Redis store (pir_shared_test.cpp) and the in-process one (pir_memory_state_test.cpp): one
// client, two claimed indices delivered out of order, each hint taken at most once, lower ones
// dropped with a take, the counter continuing after them, unknown clients told apart.
// `store` must be fresh with ready_per_client = 2; `wait_s`: how long an empty next_work waits.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "protocol/pir_shared_state.h"

namespace privsearch::protocol::testing_contract {

inline void expect_indices_once_and_hints_once(PirSharedState& state, int wait_s) {
  ASSERT_TRUE(state.register_client(42, "setup-42", "v1", "peer:test").ok());
  const auto w0 = *state.next_work("v1", wait_s);
  const auto w1 = *state.next_work("v1", wait_s);
  ASSERT_TRUE(w0 && w1);
  EXPECT_EQ(w0->client, 42u);
  EXPECT_EQ(w0->setup, "setup-42");
  EXPECT_EQ(w0->index, 0u);
  EXPECT_EQ(w1->index, 1u);
  EXPECT_FALSE(state.next_work("v1", wait_s)->has_value());  // two owed, two handed out
  ASSERT_TRUE(state.deliver(*w1, "v1", "hint-1").ok());
  ASSERT_TRUE(state.deliver(*w0, "v1", "hint-0").ok());
  EXPECT_EQ(**state.ready(42, "v1"), (std::vector<std::uint64_t>{0, 1}));
  EXPECT_EQ(*state.take_hint(42, "v1", 1), "hint-1");
  EXPECT_EQ(state.take_hint(42, "v1", 1).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(state.take_hint(42, "v1", 0).status().code(), StatusCode::kFailedPrecondition);
  // Index 0 was dropped with the take of 1 (the client is past it); the top-up queues two
  // refills, which continue the counter: never an index handed out before.
  EXPECT_TRUE((*state.ready(42, "v1"))->empty());
  const auto w2 = *state.next_work("v1", wait_s);
  ASSERT_TRUE(w2);
  EXPECT_EQ(w2->index, 2u);
  EXPECT_EQ(state.take_hint(7, "v1", 0).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(state.ready(7, "v1")->has_value());
  EXPECT_EQ(*state.clients(), (std::vector<std::uint64_t>{42}));
}

}  // namespace privsearch::protocol::testing_contract
