// Provider replicas sharing one real Redis (Debian's redis-server, started here on a unix socket
// in a temporary directory and stopped by its pid): key sets uploaded through one replica are
// served by another, what the store holds is checked like an upload (damaged or foreign values
// are typed refusals), key sets expire with their epoch, one budget holds across three replicas
// and a Redis restart, and a Redis that is down is a typed refusal, never an unmetered answer.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include "core/bytes.h"
#include "harness/spawned_redis.h"
#include "protocol/budget_ledger.h"
#include "protocol/provider_fixture.h"
#include "protocol/redis_connection.h"
#include "protocol/redis_ledger.h"
#include "protocol/shared_key_store.h"

namespace privsearch::protocol::testing_support {
namespace {

class SharedStateTest : public ProviderCoreTest {
 protected:
  void SetUp() override {
    redis_dir = dir / "redis";
    auto r = tools::SpawnedRedis::start(redis_dir);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    redis = std::move(r).value();
  }
  void TearDown() override { redis.reset(); }

  // One replica: its own key cache and connections, the shared Redis behind them.
  // `key_clock_s`, when given: the clock key sets expire by (ProviderState::key_clock_s).
  std::unique_ptr<ProviderCore> replica(ProviderLimits limits = {},
                                        std::function<std::int64_t()> key_clock_s = {}) {
    auto ledger = open_redis_ledger(redis->url());
    EXPECT_TRUE(ledger.ok()) << ledger.status().to_string();
    auto keys = open_redis_key_store(redis->url());
    EXPECT_TRUE(keys.ok()) << keys.status().to_string();
    if (!ledger.ok() || !keys.ok()) return nullptr;
    auto state = ProviderCore::make_state(limits, std::move(ledger).value());
    state->shared_keys = std::move(keys).value();
    if (key_clock_s) state->key_clock_s = std::move(key_clock_s);
    return make_core(limits, 0, std::move(state));
  }

  // Raw access to the store, as an operator (or an attacker with Redis access) has.
  void redis_set(const std::string& key, const std::string& value) {
    RedisConnection c(*parse_redis_url(redis->url()), 1000);
    ASSERT_TRUE(c.check(c.command({"SET", key, value}), "SET").ok());
  }
  std::string stored_key(const std::string& key_id) {
    return "privsearch:keys:" + to_hex(byte_view(key_id));
  }

  fs::path redis_dir;
  std::unique_ptr<tools::SpawnedRedis> redis;
};

TEST_F(SharedStateTest, KeysUploadedThroughOneReplicaAreServedByAnother) {
  auto a = replica(), b = replica();
  ASSERT_TRUE(a && b);
  const auto key_id = upload(*a);
  EXPECT_EQ(b->cached_key_sets(), 0u);
  expect_scores(b->rerank(request(key_id, ids_)), ids_);
  EXPECT_EQ(b->cached_key_sets(), 1u);  // pulled once, then served from its own cache
  expect_scores(b->rerank(request(key_id, ids_)), ids_);
  // A key id nobody uploaded is unknown on every replica.
  const std::string unknown(32, '\x07');
  EXPECT_EQ(b->rerank(request(unknown, ids_)).error().code(), v1::UNKNOWN_KEY_ID);
}

TEST_F(SharedStateTest, DamagedOrForeignStoredKeySetsAreTypedRefusals) {
  auto a = replica();
  ASSERT_TRUE(a);
  const auto upload_a = upload_request();
  const auto key_id = a->upload_keys(upload_a).key_id();
  const auto other = upload_request();  // another key epoch: a valid upload, another id
  v1::UploadKeysRequest foreign_params = upload_a;
  foreign_params.set_params_id(std::string(32, '\x01'));
  const std::string valid = upload_a.SerializeAsString();
  const std::vector<std::pair<std::string, std::string>> damaged = {
      {"garbage", "not a protobuf \xff\xff\xff"},
      {"truncated", valid.substr(0, valid.size() / 2)},
      {"other key set under this id", other.SerializeAsString()},
      {"other parameters", foreign_params.SerializeAsString()},
      {"empty", ""},
  };
  for (const auto& [what, value] : damaged) {
    redis_set(stored_key(key_id), value);
    auto b = replica();  // a replica that has not seen the key id
    ASSERT_TRUE(b);
    const auto resp = b->rerank(request(key_id, ids_));
    ASSERT_TRUE(resp.has_error()) << what;
    EXPECT_EQ(resp.error().code(), v1::UNKNOWN_KEY_ID) << what;
    EXPECT_NE(resp.error().message().find("upload the key set again"), std::string::npos) << what;
    EXPECT_EQ(b->cached_key_sets(), 0u) << what;  // nothing unchecked was cached
  }
  // The client's recovery: upload again (through any replica), which overwrites the value.
  auto b = replica();
  ASSERT_TRUE(b);
  EXPECT_EQ(b->upload_keys(upload_a).key_id(), key_id);
  auto c = replica();
  expect_scores(c->rerank(request(key_id, ids_)), ids_);
}

TEST_F(SharedStateTest, KeySetsExpireWithTheirEpochEverywhere) {
  ProviderLimits limits;
  // Redis expires the key set at the epoch's end in real time (EXAT): an epoch of a few seconds,
  // so a loaded machine does not cross it between the upload and the second replica's read (with
  // 1 s it sometimes did, and the read found nothing).
  limits.key_set_ttl_s = 5;
  // One clock for both replicas, advanced past the epoch instead of slept through.
  std::atomic<std::int64_t> now{unix_now_s()};
  const auto clock = [&now] { return now.load(); };
  auto a = replica(limits, clock), b = replica(limits, clock);
  ASSERT_TRUE(a && b);
  const auto key_id = upload(*a);
  expect_scores(b->rerank(request(key_id, ids_)), ids_);
  now += 6;
  // Cached on both, expired on both; Redis holds it no longer than the epoch (EXAT its end).
  EXPECT_EQ(a->rerank(request(key_id, ids_)).error().code(), v1::UNKNOWN_KEY_ID);
  EXPECT_EQ(b->rerank(request(key_id, ids_)).error().code(), v1::UNKNOWN_KEY_ID);
  KeyId id{};
  std::copy(key_id.begin(), key_id.end(), id.begin());
  const auto stored = open_redis_key_store(redis->url()).value()->get(id);
  ASSERT_TRUE(stored.ok()) << stored.status().to_string();
  if (stored->has_value()) {
    EXPECT_LE((*stored)->expires_s, now.load() - 1);
  }
}

TEST_F(SharedStateTest, OneBudgetAcrossThreeReplicasAndARedisRestart) {
  ProviderLimits limits;
  limits.scores_per_key_id = 512;  // K = 1 requests below
  std::vector<std::unique_ptr<ProviderCore>> replicas;
  for (int i = 0; i < 3; ++i) replicas.push_back(replica(limits));
  ASSERT_TRUE(replicas[0] && replicas[1] && replicas[2]);
  const auto key_id = upload(*replicas[0]);
  const std::vector<std::uint64_t> one{5};
  std::uint64_t last_remaining = 0;
  for (int i = 0; i < 500; ++i) {
    const auto resp = replicas[static_cast<std::size_t>(i % 3)]->rerank(request(key_id, one));
    ASSERT_FALSE(resp.has_error()) << i << ": " << resp.error().message();
    last_remaining = resp.scores_remaining();
  }
  EXPECT_EQ(last_remaining, 12u);
  // Restart Redis (its append-only file keeps the counts) and every replica.
  redis->stop();
  EXPECT_EQ(replicas[1]->rerank(request(key_id, one)).error().code(), v1::STATE_UNAVAILABLE);
  auto again = tools::SpawnedRedis::start(redis_dir);
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  redis = std::move(again).value();
  replicas.clear();
  for (int i = 0; i < 3; ++i) replicas.push_back(replica(limits));
  for (int i = 500; i < 512; ++i) {
    const auto resp = replicas[static_cast<std::size_t>(i % 3)]->rerank(request(key_id, one));
    ASSERT_FALSE(resp.has_error()) << i << ": " << resp.error().message();
  }
  // Request 513 is refused on every replica.
  for (auto& r : replicas) {
    EXPECT_EQ(r->rerank(request(key_id, one)).error().code(), v1::BUDGET_EXHAUSTED);
  }
}

TEST_F(SharedStateTest, OneRequestsAccountsShareARedisClusterSlot) {
  // Redis Cluster runs a script only over keys of one slot: the hash tag {...} of every account
  // a request charges must be the same (the identity's, else the key id's).
  ProviderLimits limits;
  limits.scores_per_identity = 10 * ids_.size();
  auto a = replica(limits);
  ASSERT_TRUE(a);
  const Caller alice{"alice", ""};
  const auto alice_key = upload(*a, false, alice);
  expect_scores(a->rerank(request(alice_key, ids_), alice), ids_);
  const auto anonymous_key = upload(*a);
  expect_scores(a->rerank(request(anonymous_key, ids_)), ids_);
  RedisConnection c(*parse_redis_url(redis->url()), 1000);
  const auto keys = c.command({"KEYS", "privsearch:budget:*"});
  ASSERT_TRUE(c.check(keys, "KEYS").ok());
  std::vector<std::string> names;
  for (std::size_t i = 0; i < (*keys)->elements; ++i) {
    names.push_back(reply_string((*keys)->element[i]).value_or(""));
  }
  std::sort(names.begin(), names.end());
  const std::string anon_hex = to_hex(byte_view(anonymous_key));
  const std::string alice_hex = to_hex(byte_view(alice_key));
  std::vector<std::string> want = {
      "privsearch:budget:{identity:alice}:identity:alice:" +
          std::to_string(unix_now_s() / limits.identity_budget_window_s),
      "privsearch:budget:{identity:alice}:key:" + alice_hex,
      "privsearch:budget:{key:" + anon_hex + "}:key:" + anon_hex};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(names, want);
}

TEST_F(SharedStateTest, RedisDownIsATypedRefusalNeverAnUnmeteredAnswer) {
  auto a = replica(), b = replica();
  ASSERT_TRUE(a && b);
  const auto key_id = upload(*a);
  expect_scores(a->rerank(request(key_id, ids_)), ids_);
  redis->stop();
  // A's keys are cached, but the budget cannot be charged: refused. B cannot even pull them.
  EXPECT_EQ(a->rerank(request(key_id, ids_)).error().code(), v1::STATE_UNAVAILABLE);
  EXPECT_EQ(b->rerank(request(key_id, ids_)).error().code(), v1::STATE_UNAVAILABLE);
  const auto up = b->upload_keys(upload_request());
  ASSERT_TRUE(up.has_error());
  EXPECT_EQ(up.error().code(), v1::STATE_UNAVAILABLE);
  // The error names where the store is, never its password.
  EXPECT_NE(up.error().message().find("redis.sock"), std::string::npos) << up.error().message();
}

}  // namespace
}  // namespace privsearch::protocol::testing_support
