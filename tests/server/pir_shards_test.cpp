// The PIR database split by rows across three shard processes behind a coordinating provider
// (server/pir_coordinator.h, pir/zippir/zippir_shard.h), all started here on loopback and stopped
// by their pids: a client fetches through the coordinator exactly the records it fetches from one
// provider, and when a shard dies the fetch fails whole with PIR_SHARD_UNAVAILABLE naming it
// while the coordinator keeps serving. (That S shards' parts assemble to the single server's
// bytes is checked at the library level, tests/pir/zippir_shard_test.cpp.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "client/payload_fetcher.h"
#include "client/provider_client.h"
#include "harness/spawned_provider.h"
#include "index/artifacts/atomic_file.h"
#include "index/artifacts/payload_store.h"
#include "index/build.h"
#include "testing/test_util.h"
#include "testing/tiny_collection.h"

namespace privsearch {
namespace {

class PirShardsTest : public ::testing::Test {
 public:  // three_shards_serve_one_providers_records drives both backends' fixtures
  void SetUp() override {
    o = testing::tiny_index_options(c, record_bytes);
    manifest = *index::build_index(o, nullptr);
    auto cert = tools::write_shared_certificate(c.dir);
    ASSERT_TRUE(cert.ok()) << cert.status().to_string();
    certificate = *cert;
  }
  std::unique_ptr<tools::SpawnedProvider> spawn(const std::string& name,
                                                std::vector<std::string> extra) {
    std::vector<std::string> args{"--threads",
                                  "2",
                                  "--pir-test-params",
                                  "--pir-backend",
                                  backend,
                                  "--pir-setups-per-minute",
                                  "0",
                                  "--state",
                                  "memory"};
    args.insert(args.end(), extra.begin(), extra.end());
    tools::ProviderLaunch launch(o.out, c.dir / name, args);
    launch.binary = PRIVSEARCH_PROVIDER_BIN;
    certificate.apply(launch);
    launch.start_timeout = std::chrono::seconds(60);
    auto p = tools::SpawnedProvider::start(launch);
    EXPECT_TRUE(p.ok()) << p.status().to_string();
    return p.ok() ? std::move(p).value() : nullptr;
  }
  std::unique_ptr<client::PayloadFetcher> fetcher(const tools::SpawnedProvider& p,
                                                  std::unique_ptr<client::ProviderClient>& keep) {
    keep = *client::ProviderClient::connect(p.connect_options());
    client::FetchOptions fo;
    fo.allow_insecure = true;
    fo.wait_ms = 60000;
    auto f = client::PayloadFetcher::create(*keep, manifest.version_id, fo);
    EXPECT_TRUE(f.ok()) << f.status().to_string();
    return f.ok() ? std::move(f).value() : nullptr;
  }

  std::string backend = "zippir";
  std::size_t record_bytes = 128;
  testing::Collection c{"pir_shards"};
  index::BuildOptions o;
  index::Manifest manifest;
  tools::SharedCertificate certificate;
};

// Hintless: the shards hold output blocks (records of 1,200 B at the test ring d = 256 fill
// three outputs, one per shard).
class HintlessPirShardsTest : public PirShardsTest {
 protected:
  HintlessPirShardsTest() {
    backend = "hintless";
    record_bytes = 1200;
  }
};

void three_shards_serve_one_providers_records(PirShardsTest& t);

TEST_F(PirShardsTest, ThreeShardsServeOneProvidersRecordsAndFailWholeWhenOneIsDown) {
  three_shards_serve_one_providers_records(*this);
}

TEST_F(HintlessPirShardsTest, ThreeShardsServeOneProvidersRecordsAndFailWholeWhenOneIsDown) {
  three_shards_serve_one_providers_records(*this);
  // A fourth shard has no output block of its own: refused at start, by name.
  std::vector<std::string> args{"--threads", "2", "--pir-test-params", "--pir-shard", "0/4"};
  tools::ProviderLaunch launch(o.out, c.dir / "shard-of-4", args);
  launch.binary = PRIVSEARCH_PROVIDER_BIN;
  certificate.apply(launch);
  launch.log_file = c.dir / "shard-of-4.log";
  EXPECT_FALSE(tools::SpawnedProvider::start(launch).ok());
  const auto log = *index::read_file_bytes(launch.log_file);
  EXPECT_NE(std::string(log.begin(), log.end()).find("at most 3 shard(s)"), std::string::npos);
}

void three_shards_serve_one_providers_records(PirShardsTest& t) {
  auto& o = t.o;
  auto spawn = [&t](const std::string& name, std::vector<std::string> extra) {
    return t.spawn(name, std::move(extra));
  };
  auto fetcher = [&t](const tools::SpawnedProvider& p,
                      std::unique_ptr<client::ProviderClient>& keep) { return t.fetcher(p, keep); };
  auto& certificate = t.certificate;
  auto single = spawn("single", {});
  std::vector<std::unique_ptr<tools::SpawnedProvider>> shards;
  std::string addresses;
  for (int i = 0; i < 3; ++i) {
    shards.push_back(
        spawn("shard-" + std::to_string(i), {"--pir-shard", std::to_string(i) + "/3"}));
    ASSERT_NE(shards.back(), nullptr);
    addresses += (i ? "," : "") + std::string("127.0.0.1:") + std::to_string(shards.back()->port());
  }
  auto coordinator = spawn(
      "coordinator", {"--pir-shards", addresses, "--pir-shard-ca", certificate.cert_file.string()});
  ASSERT_NE(single, nullptr);
  ASSERT_NE(coordinator, nullptr);

  const auto payloads = *index::PayloadStore::open(o.out / "payloads.bin");
  std::unique_ptr<client::ProviderClient> single_client, sharded_client;
  auto from_single = fetcher(*single, single_client);
  auto from_shards = fetcher(*coordinator, sharded_client);
  ASSERT_NE(from_single, nullptr);
  ASSERT_NE(from_shards, nullptr);
  // The coordinator's database is the shards' together.
  const auto info = *sharded_client->pir_info();
  EXPECT_EQ(info.pir_db_bytes(), single_client->pir_info()->pir_db_bytes());
  for (const std::uint64_t doc : {0ull, 7ull, 64ull, 127ull}) {
    const auto a = from_single->fetch(doc);
    const auto b = from_shards->fetch(doc);
    ASSERT_TRUE(a.ok()) << a.status().to_string();
    ASSERT_TRUE(b.ok()) << b.status().to_string();
    EXPECT_EQ(*a, *b) << "document " << doc;
    EXPECT_EQ(*b, *payloads.text(doc));
  }

  // Shard 1 dies: a fetch fails whole, naming it; the coordinator keeps serving.
  shards[1]->stop();
  const auto down = from_shards->fetch(3);
  ASSERT_FALSE(down.ok());
  EXPECT_NE(down.status().message().find("PIR shard 1 of 3"), std::string::npos)
      << down.status().to_string();
  EXPECT_TRUE(sharded_client->server_info().ok());
  const auto raw = sharded_client->pir_info();
  ASSERT_TRUE(raw.ok());
  ASSERT_TRUE(raw->has_error());
  EXPECT_EQ(raw->error().code(), v1::PIR_SHARD_UNAVAILABLE);
  for (auto& s : shards) {
    if (s) s->stop();
  }
  coordinator->stop();
  single->stop();
}

}  // namespace
}  // namespace privsearch
