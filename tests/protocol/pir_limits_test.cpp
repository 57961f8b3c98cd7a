// The private-fetch service under many registrations (protocol/pir_service.h): setups are
// rate-limited per client, hints are scheduled fewest-ready-first so a newcomer is not queued
// behind everyone's second hint, idle registrations expire and are never revived, and a full
// service evicts an idle registration instead of refusing everyone.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/bytes.h"
#include "index/artifacts/payload_store.h"
#include "index/build.h"
#include "pir/zippir/zippir_client.h"
#include "protocol/pir_service.h"
#include "testing/test_util.h"
#include "testing/tiny_collection.h"

namespace privsearch::protocol {
namespace {

class PirLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    payloads = testing::build_tiny_payloads(c, 128);
    ASSERT_NE(payloads, nullptr);
  }
  std::unique_ptr<PirService> make_service(PirConfig pc) {
    pc.lwe_params = "insecure-test-n64-binary";
    pc.paillier_bits = 512;
    pc.allow_insecure = true;
    return *PirService::create(*payloads, "v1", pc);
  }
  // A fresh client's setup request (its own Paillier key).
  v1::PirSetupRequest setup_request(PirService& service) {
    const auto info = *pir::ZipPirPublicInfo::deserialize(byte_view(service.info().info()), true);
    auto client = *pir::ZipPirClient::create(info, prng);
    v1::PirSetupRequest req;
    req.set_artifact_version("v1");
    req.set_setup(to_byte_string(client.setup_message()));
    return req;
  }
  v1::PirStatusResponse status_of(PirService& service, std::uint64_t id) {
    v1::PirStatusRequest req;
    req.set_artifact_version("v1");
    req.set_client_id(id);
    return service.status(req);
  }
  std::size_t ready(PirService& service, std::uint64_t id) {
    return static_cast<std::size_t>(status_of(service, id).ready_query_indices_size());
  }

  testing::Collection c{"pir-limits"};
  std::unique_ptr<index::PayloadStore> payloads;
  Prng prng = privsearch::testing::test_prng(2026);
};

// Row shards of one index share A, derived from the index's salt: the same salt gives the same
// public info on every shard, another index's salt another A, and no salt is refused (v1 had
// one fixed seed for every deployment).
TEST_F(PirLimitsTest, RowShardsDeriveTheirMatrixFromTheIndexSalt) {
  auto a_seed_of = [&](std::size_t shard, const std::string& salt) {
    PirConfig pc;
    pc.lwe_params = "insecure-test-n64-binary";
    pc.paillier_bits = 512;
    pc.allow_insecure = true;
    pc.shard = shard;
    pc.shards = 2;
    pc.matrix_salt = salt;
    auto service = PirService::create(*payloads, "v1", pc);
    EXPECT_TRUE(service.ok()) << service.status().to_string();
    const auto info =
        *pir::ZipPirPublicInfo::deserialize(byte_view((*service)->info().info()), true);
    return std::vector<std::uint8_t>(info.a_seed.begin(), info.a_seed.end());
  };
  EXPECT_EQ(a_seed_of(0, "index-a"), a_seed_of(1, "index-a"));
  EXPECT_NE(a_seed_of(0, "index-a"), a_seed_of(0, "index-b"));
  PirConfig pc;
  pc.lwe_params = "insecure-test-n64-binary";
  pc.paillier_bits = 512;
  pc.allow_insecure = true;
  pc.shards = 2;
  EXPECT_EQ(PirService::create(*payloads, "v1", pc).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(PirLimitsTest, SetupsAreRateLimitedPerClient) {
  PirConfig pc;
  pc.setups = {/*per_minute=*/1, /*burst=*/2};
  auto service = make_service(pc);
  EXPECT_FALSE(service->setup(setup_request(*service), "peer:10.0.0.1").has_error());
  EXPECT_FALSE(service->setup(setup_request(*service), "peer:10.0.0.1").has_error());
  const auto third = service->setup(setup_request(*service), "peer:10.0.0.1");
  ASSERT_TRUE(third.has_error());
  EXPECT_EQ(third.error().code(), v1::RATE_LIMITED);
  EXPECT_FALSE(service->setup(setup_request(*service), "identity:alice").has_error());
  EXPECT_EQ(service->registered_clients(), 3u);
}

TEST_F(PirLimitsTest, ANewcomersFirstHintComesBeforeAnyoneElsesSecond) {
  PirConfig pc;
  pc.setups = {0, 1};
  pc.ready_per_client = 4;
  pc.offline_threads = 1;
  auto service = make_service(pc);
  std::vector<std::uint64_t> earlier;
  for (int i = 0; i < 6; ++i)
    earlier.push_back(service->setup(setup_request(*service)).client_id());
  // Wait until every earlier client has its first hint and some have more.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto total = [&] {
    std::size_t t = 0;
    for (auto id : earlier) t += ready(*service, id);
    return t;
  };
  while (total() < 8 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const auto newcomer = service->setup(setup_request(*service)).client_id();
  const std::size_t before = total();
  while (ready(*service, newcomer) == 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  ASSERT_EQ(ready(*service, newcomer), 1u);
  // At most the hint in progress when the newcomer arrived (and one finishing while we looked)
  // went to others first: not the 6 x 3 further hints the earlier clients were owed.
  EXPECT_LE(total(), before + 2);
  ASSERT_TRUE(service->wait_until_ready(60000));
  for (auto id : earlier) EXPECT_EQ(ready(*service, id), 4u);
}

// Forged setups: one owner registering many clients (moduli a cheap check cannot
// tell from real ones, arriving at the setup rate) must not queue another owner's first hint
// behind all of theirs. Scheduling is fair between owners: the newcomer's first hint waits for
// at most the hint in progress (per registration it would have waited for ~8 of the 16 on
// average).
TEST_F(PirLimitsTest, AnotherOwnersFloodOfRegistrationsDoesNotQueueANewcomer) {
  PirConfig pc;
  pc.setups = {0, 1};
  pc.ready_per_client = 8;
  pc.offline_threads = 1;
  auto service = make_service(pc);
  std::vector<v1::PirSetupRequest> flood;
  for (int i = 0; i < 16; ++i) flood.push_back(setup_request(*service));
  const auto alice_setup = setup_request(*service);
  std::vector<std::uint64_t> mallory;
  for (const auto& req : flood)
    mallory.push_back(service->setup(req, "identity:mallory").client_id());
  auto mallory_ready = [&] {
    std::size_t t = 0;
    for (auto id : mallory) t += ready(*service, id);
    return t;
  };
  // Hints mallory's registrations got while they arrived (no other owner was waiting then).
  const std::size_t mallory_before = mallory_ready();
  const auto alice = service->setup(alice_setup, "identity:alice").client_id();
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (ready(*service, alice) == 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  ASSERT_EQ(ready(*service, alice), 1u);
  // From alice's setup on: one that finished between the count and the setup, the hint in
  // progress when alice registered, and one that finished while we looked; scheduling per
  // registration would have served up to 15 of mallory's first hints before alice's.
  EXPECT_LE(mallory_ready(), mallory_before + 3);
  ASSERT_TRUE(service->wait_until_ready(120000));
  for (auto id : mallory) EXPECT_EQ(ready(*service, id), 8u);  // everyone is served in the end
}

TEST_F(PirLimitsTest, IdleRegistrationsExpireAndAreNotRevived) {
  PirConfig pc;
  pc.setups = {0, 1};
  pc.idle_expiry_s = 1;
  auto now = std::chrono::steady_clock::now();
  pc.clock = [&now] { return now; };  // advanced below instead of slept through
  auto service = make_service(pc);
  const auto old_setup = setup_request(*service);
  const auto old_id = service->setup(old_setup).client_id();
  now += std::chrono::milliseconds(1100);
  // Expiry runs when a setup arrives.
  ASSERT_FALSE(service->setup(setup_request(*service)).has_error());
  EXPECT_EQ(status_of(*service, old_id).error().code(), v1::UNKNOWN_PIR_CLIENT);
  // The same setup message again would restart its query indices at 0: refused.
  const auto again = service->setup(old_setup);
  ASSERT_TRUE(again.has_error());
  EXPECT_EQ(again.error().code(), v1::UNKNOWN_PIR_CLIENT);
  EXPECT_NE(again.error().message().find("new key"), std::string::npos);
  EXPECT_EQ(service->registered_clients(), 1u);
}

TEST_F(PirLimitsTest, AFullServiceEvictsAnIdleRegistrationNotEveryone) {
  PirConfig pc;
  pc.setups = {0, 1};
  pc.max_clients = 2;
  pc.evict_idle_after_s = 60;
  auto busy = make_service(pc);
  ASSERT_FALSE(busy->setup(setup_request(*busy)).has_error());
  ASSERT_FALSE(busy->setup(setup_request(*busy)).has_error());
  // Both registrations are fresh: nothing idle enough to evict.
  EXPECT_EQ(busy->setup(setup_request(*busy)).error().code(), v1::PIR_LIMIT);
  pc.evict_idle_after_s = 0;
  auto now = std::chrono::steady_clock::now();
  pc.clock = [&now] { return now; };
  auto idle = make_service(pc);
  const auto first = idle->setup(setup_request(*idle)).client_id();
  now += std::chrono::milliseconds(5);
  ASSERT_FALSE(idle->setup(setup_request(*idle)).has_error());
  const auto third = idle->setup(setup_request(*idle));
  ASSERT_FALSE(third.has_error()) << third.error().message();
  EXPECT_EQ(idle->registered_clients(), 2u);
  // The least recently used one went.
  EXPECT_EQ(status_of(*idle, first).error().code(), v1::UNKNOWN_PIR_CLIENT);
}

}  // namespace
}  // namespace privsearch::protocol
