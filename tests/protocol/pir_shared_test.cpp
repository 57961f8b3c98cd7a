// Private fetch with registrations and hints shared through a real Redis (Debian's
// redis-server, started here on a unix socket and stopped by its pid) by several PirService
// replicas over one payload store: one matrix seed for all, a client registered through one
// replica fetches through another, every query index is answered at most once cluster-wide,
// the offline work is done once, damaged store values are typed refusals and a Redis that is
// down is STATE_UNAVAILABLE.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "core/bytes.h"
#include "harness/spawned_redis.h"
#include "index/artifacts/payload_store.h"
#include "index/build.h"
#include "pir/zippir/zippir_client.h"
#include "protocol/pir_owners.h"
#include "protocol/pir_service.h"
#include "protocol/pir_shared_state.h"
#include "protocol/pir_store_contract.h"
#include "protocol/redis_connection.h"
#include "testing/test_util.h"
#include "testing/tiny_collection.h"

namespace privsearch::protocol {
namespace {

class PirSharedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    payloads = testing::build_tiny_payloads(c, 128);
    ASSERT_NE(payloads, nullptr);
    redis_dir = testing::tiny_index_options(c, 128).out / "redis";
    auto r = tools::SpawnedRedis::start(redis_dir);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    redis = std::move(r).value();
  }
  void TearDown() override { redis.reset(); }

  static PirConfig test_config() {
    PirConfig pc;
    pc.lwe_params = "insecure-test-n64-binary";
    pc.paillier_bits = 512;
    pc.allow_insecure = true;
    return pc;
  }
  std::unique_ptr<PirService> replica(std::size_t ready_per_client = 2) {
    PirConfig pc = test_config();
    pc.ready_per_client = ready_per_client;
    pc.setups = {0, 1};
    PirSharedLimits limits;
    limits.ready_per_client = ready_per_client;
    auto shared = open_redis_pir_state(redis->url(), limits);
    EXPECT_TRUE(shared.ok()) << shared.status().to_string();
    if (!shared.ok()) return nullptr;
    auto s = PirService::create(*payloads, "v1", pc, std::move(shared).value());
    EXPECT_TRUE(s.ok()) << s.status().to_string();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  pir::ZipPirClient new_client(PirService& service) {
    const auto info = *pir::ZipPirPublicInfo::deserialize(byte_view(service.info().info()), true);
    return *pir::ZipPirClient::create(info, prng);
  }
  v1::PirSetupResponse setup(PirService& service, const pir::ZipPirClient& client) {
    v1::PirSetupRequest req;
    req.set_artifact_version("v1");
    req.set_setup(to_byte_string(client.setup_message()));
    return service.setup(req);
  }
  v1::PirStatusResponse status(PirService& service, std::uint64_t id) {
    v1::PirStatusRequest req;
    req.set_artifact_version("v1");
    req.set_client_id(id);
    return service.status(req);
  }
  // Waits (bounded) until `service` reports at least `n` ready indices for `id`.
  std::vector<std::uint64_t> wait_ready(PirService& service, std::uint64_t id, std::size_t n) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
      const auto s = status(service, id);
      EXPECT_FALSE(s.has_error()) << s.error().message();
      if (s.has_error() || static_cast<std::size_t>(s.ready_query_indices_size()) >= n ||
          std::chrono::steady_clock::now() > until) {
        return {s.ready_query_indices().begin(), s.ready_query_indices().end()};
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  // Waits for a ready index the client can still use (at or after its next index; several
  // workers deliver hints out of order) and moves the client to it.
  bool move_to_ready_index(PirService& service, pir::ZipPirClient& client) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < until) {
      const auto s = status(service, client.client_id());
      if (s.has_error()) return false;
      for (const std::uint64_t i : s.ready_query_indices()) {
        if (i >= client.next_query_index()) return client.skip_to_query_index(i).ok();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  v1::PirQueryRequest query_request(pir::ZipPirClient& client, std::size_t record,
                                    std::optional<pir::ZipPirPendingQuery>& pending) {
    v1::PirQueryRequest req;
    req.set_artifact_version("v1");
    req.set_query(to_byte_string(*client.query(record, prng, pending)));
    return req;
  }
  std::vector<std::uint8_t> record(std::size_t i) {
    return {payloads->record(i), payloads->record(i) + payloads->record_bytes()};
  }
  void redis_command(const std::vector<std::string>& args) {
    RedisConnection conn(*parse_redis_url(redis->url()), 1000);
    ASSERT_TRUE(conn.check(conn.command(args), args[0]).ok());
  }

  testing::Collection c{"pir-shared"};
  std::unique_ptr<index::PayloadStore> payloads;
  std::filesystem::path redis_dir;
  std::unique_ptr<tools::SpawnedRedis> redis;
  Prng prng = privsearch::testing::test_prng(4242);
};

TEST_F(PirSharedTest, RegisteredThroughOneReplicaFetchedThroughAnother) {
  auto a = replica(), b = replica();
  ASSERT_TRUE(a && b);
  // One matrix A for the cluster: the public info is the same whichever replica answers.
  EXPECT_EQ(a->info().info(), b->info().info());
  auto client = new_client(*a);
  const auto id = setup(*a, client).client_id();
  ASSERT_EQ(id, client.client_id());
  const auto ready = wait_ready(*b, id, 1);
  ASSERT_FALSE(ready.empty());
  for (const std::size_t rec : {5u, 77u}) {
    std::optional<pir::ZipPirPendingQuery> pending;
    ASSERT_TRUE(move_to_ready_index(*a, client));
    PirService& via = rec == 5 ? *b : *a;  // B has never seen this client before the first
    const auto resp = via.query(query_request(client, rec, pending));
    ASSERT_FALSE(resp.has_error()) << resp.error().message();
    const auto got = client.extract(*pending, byte_view(resp.answer()));
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    EXPECT_EQ(*got, record(rec));
  }
}

TEST_F(PirSharedTest, EachQueryIndexIsAnsweredAtMostOnceAcrossReplicas) {
  auto a = replica(), b = replica();
  ASSERT_TRUE(a && b);
  auto client = new_client(*a);
  const auto id = setup(*a, client).client_id();
  ASSERT_EQ(id, client.client_id());
  for (int round = 0; round < 4; ++round) {
    ASSERT_TRUE(move_to_ready_index(*a, client));
    std::optional<pir::ZipPirPendingQuery> pending;
    const auto req = query_request(client, static_cast<std::size_t>(round), pending);
    // The same query (one index) to both replicas at once: exactly one answers.
    std::atomic<int> answered{0}, refused{0};
    std::thread ta([&] { (a->query(req).has_error() ? refused : answered)++; });
    std::thread tb([&] { (b->query(req).has_error() ? refused : answered)++; });
    ta.join();
    tb.join();
    EXPECT_EQ(answered.load(), 1) << "round " << round;
    EXPECT_EQ(refused.load(), 1) << "round " << round;
    // And again later, on either: refused with a typed code.
    const auto again = b->query(req);
    ASSERT_TRUE(again.has_error());
    EXPECT_EQ(again.error().code(), v1::NO_PRECOMPUTED_QUERY);
  }
}

TEST_F(PirSharedTest, OfflineWorkIsDoneOnceAcrossReplicas) {
  auto a = replica(4), b = replica(4), c3 = replica(4);
  ASSERT_TRUE(a && b && c3);
  auto client = new_client(*a);
  const auto id = setup(*b, client).client_id();
  const auto ready = wait_ready(*c3, id, 4);
  // Three workers, four hints owed: indices 0..3, each computed once (a duplicated hint would
  // have taken a fifth index from the counter or overwritten one).
  EXPECT_EQ(ready, (std::vector<std::uint64_t>{0, 1, 2, 3}));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // no worker computes a fifth
  RedisConnection conn(*parse_redis_url(redis->url()), 1000);
  const auto next = conn.command({"GET", "privsearch:pir:{" + std::to_string(id) + "}:next"});
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(reply_string(next->get()).value_or(""), "4");
}

TEST_F(PirSharedTest, TheStoreHandsOutIndicesOnceAndHintsOnce) {
  // The scripts alone, without any replica's worker competing: one client, two claimed
  // indices delivered out of order, each hint taken at most once, lower ones dropped.
  PirSharedLimits limits;
  limits.ready_per_client = 2;
  auto state = std::move(open_redis_pir_state(redis->url(), limits)).value();
  testing_contract::expect_indices_once_and_hints_once(*state, 1);
}

TEST_F(PirSharedTest, DamagedStoreValuesAreTypedRefusals) {
  auto a = replica();
  ASSERT_TRUE(a);
  auto client = new_client(*a);
  const auto id = setup(*a, client).client_id();
  const auto idx = wait_ready(*a, id, 2);
  ASSERT_EQ(idx.size(), 2u);
  const std::string tag = "privsearch:pir:{" + std::to_string(id) + "}:";
  // A damaged hint: the query is refused with a typed code and the index is spent.
  redis_command({"HSET", tag + "hints:v1", std::to_string(idx[0]), "garbage"});
  std::optional<pir::ZipPirPendingQuery> pending;
  ASSERT_TRUE(client.skip_to_query_index(idx[0]).ok());
  auto resp = a->query(query_request(client, 1, pending));
  ASSERT_TRUE(resp.has_error());
  EXPECT_EQ(resp.error().code(), v1::NO_PRECOMPUTED_QUERY) << resp.error().message();
  // A damaged registration, seen by a replica that must read it: UNKNOWN_PIR_CLIENT (the
  // client sets up again), never a crash or an answer under someone else's key.
  auto other = new_client(*a);
  redis_command({"SET", tag + "setup", to_byte_string(other.setup_message())});
  auto b = replica();
  ASSERT_TRUE(b);
  resp = b->query(query_request(client, 2, pending));
  ASSERT_TRUE(resp.has_error());
  EXPECT_EQ(resp.error().code(), v1::UNKNOWN_PIR_CLIENT) << resp.error().message();
  redis_command({"SET", tag + "setup", "\x01\x02"});
  auto c3 = replica();
  ASSERT_TRUE(c3);
  resp = c3->query(query_request(client, 3, pending));
  ASSERT_TRUE(resp.has_error());
  EXPECT_EQ(resp.error().code(), v1::UNKNOWN_PIR_CLIENT) << resp.error().message();
  // A damaged matrix seed: a new replica refuses to start rather than serve another matrix.
  redis_command({"SET", "privsearch:pir:a-seed", "short"});
  const auto bad = PirService::create(*payloads, "v1", test_config(),
                                      std::move(open_redis_pir_state(redis->url(), {})).value());
  EXPECT_EQ(bad.status().code(), StatusCode::kDataLoss) << bad.status().to_string();
}

TEST_F(PirSharedTest, RedisDownIsStateUnavailable) {
  auto a = replica();
  ASSERT_TRUE(a);
  auto client = new_client(*a);
  const auto id = setup(*a, client).client_id();
  const auto idx = wait_ready(*a, id, 1);
  ASSERT_FALSE(idx.empty());
  redis->stop();
  EXPECT_EQ(status(*a, id).error().code(), v1::STATE_UNAVAILABLE);
  EXPECT_EQ(setup(*a, new_client(*a)).error().code(), v1::STATE_UNAVAILABLE);
  std::optional<pir::ZipPirPendingQuery> pending;
  ASSERT_TRUE(client.skip_to_query_index(idx.front()).ok());
  EXPECT_EQ(a->query(query_request(client, 1, pending)).error().code(), v1::STATE_UNAVAILABLE);
}

// Registrations' owners are bound cluster-wide: a replica that never saw the setup (another
// PirOwners over the same Redis) refuses another identity and admits the owner, an unbound
// registration stays open, and a store that cannot be read fails closed.
TEST_F(PirSharedTest, RegistrationOwnersAreBoundAcrossReplicas) {
  auto open = [&] {
    auto shared = open_redis_pir_state(redis->url(), PirSharedLimits{});
    EXPECT_TRUE(shared.ok()) << shared.status().to_string();
    return std::shared_ptr<PirSharedState>(std::move(shared).value());
  };
  PirOwners replica_a, replica_b;
  replica_a.share(open());
  replica_b.share(open());
  const auto db = v1::PIR_DATABASE_PAYLOADS;
  replica_a.bind(db, 77, "alice");
  EXPECT_TRUE(replica_b.allowed(db, 77, "alice"));
  EXPECT_FALSE(replica_b.allowed(db, 77, "mallory"));
  EXPECT_FALSE(replica_b.allowed(db, 77, ""));
  replica_b.bind(db, 77, "mallory");  // the first owner keeps it
  EXPECT_FALSE(replica_a.allowed(db, 77, "mallory"));
  EXPECT_FALSE(replica_b.allowed(db, 77, "mallory"));
  EXPECT_TRUE(replica_b.allowed(db, 78, "anyone"));  // never bound
  redis->stop();
  EXPECT_FALSE(replica_b.allowed(db, 79, "anyone"));  // the store is down: refused
  EXPECT_TRUE(replica_a.allowed(db, 77, "alice"));    // a local binding needs no store
}

}  // namespace
}  // namespace privsearch::protocol
