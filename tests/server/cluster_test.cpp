// The provider tier at the process level (docs/DEPLOY.md): Redis, HAProxy and three
// privsearch-provider replicas on loopback, all started here and stopped by their pids. Through the
// balancer 8 clients make 50 searches each while one replica is SIGKILLed mid-burst and restarted:
// none fails (the balancer's health checks on the gRPC health service and redispatch, the client's
// retries, key sets pulled from Redis by the replica a client lands on next). A private fetch
// registered before two replicas are killed goes on without registering again.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "ckks/param_sets.h"
#include "client/payload_fetcher.h"
#include "client/provider_client.h"
#include "client/rerank_session.h"
#include "harness/h2_attacks.h"
#include "harness/random_vectors.h"
#include "harness/spawned_haproxy.h"
#include "harness/spawned_provider.h"
#include "harness/spawned_redis.h"
#include "index/build.h"
#include "testing/test_util.h"
#include "testing/tiny_collection.h"

namespace privsearch {
namespace {

class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    o = testing::tiny_index_options(c, 128);
    manifest = *index::build_index(o, nullptr);
    auto cert = tools::write_shared_certificate(c.dir);
    ASSERT_TRUE(cert.ok()) << cert.status().to_string();
    certificate = *cert;
    auto r = tools::SpawnedRedis::start(c.dir / "redis");
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    redis = std::move(r).value();
  }
  // A replica; `unlimited`: no per-client upload or concurrency limits (the burst test's 8
  // clients all come from 127.0.0.1).
  std::unique_ptr<tools::SpawnedProvider> spawn(int i, const std::string& listen,
                                                bool unlimited = true) {
    std::vector<std::string> args{"--threads", "2", "--state", redis->url(), "--pir-test-params"};
    if (unlimited) {
      args.insert(args.end(),
                  {"--key-uploads-per-minute", "0", "--max-concurrent-per-client", "0"});
    } else {
      // The burst of 10 without a refill a loaded machine could see mid-test.
      args.insert(args.end(), {"--key-uploads-per-minute", "1"});
    }
    tools::ProviderLaunch launch(o.out, c.dir / ("replica-" + std::to_string(i)), args);
    launch.binary = PRIVSEARCH_PROVIDER_BIN;
    launch.listen = listen;
    certificate.apply(launch);
    launch.trust_proxy_from = {tools::kLoopbackBalancerSource};  // the balancer (PROXY v2)
    launch.start_timeout = std::chrono::seconds(60);
    auto p = tools::SpawnedProvider::start(launch);
    EXPECT_TRUE(p.ok()) << p.status().to_string();
    return p.ok() ? std::move(p).value() : nullptr;
  }

  testing::Collection c{"cluster"};
  index::BuildOptions o;
  index::Manifest manifest;
  tools::SharedCertificate certificate;
  std::unique_ptr<tools::SpawnedRedis> redis;
};

// Anonymous clients behind the balancer (docs/SECURITY.md, "behind the balancer"). With TLS passed
// through, every client reached the replicas from the balancer's address, so one client's 10 key
// uploads made every other anonymous client fail RATE_LIMITED. The balancer now sends PROXY v2
// and the replica's front, trusting it from the balancer's address only, names the real client
// to the provider: two sources are limited apart, at the default limits (30 a minute, burst 10).
TEST_F(ClusterTest, AnonymousSourcesBehindTheBalancerAreLimitedApart) {
  auto replica = spawn(0, "127.0.0.1:0", /*unlimited=*/false);
  ASSERT_TRUE(replica);
  tools::BalancerSpec spec;
  spec.replicas = {"127.0.0.1:" + std::to_string(replica->port())};
  spec.check_interval_ms = 300;
  auto balancer = tools::SpawnedHaproxy::start(c.dir / "haproxy-limits", spec);
  ASSERT_TRUE(balancer.ok()) << balancer.status().to_string();
  // The balancer's first health check has passed once a search gets through.
  auto co = replica->connect_options();
  co.port = (*balancer)->port();
  auto rate_limited = [&](const std::string& source, std::size_t calls) {
    const auto limited = tools::rate_limited_uploads(co.port, source, calls);
    EXPECT_TRUE(limited.ok()) << limited.status().to_string();
    return limited.ok() ? *limited : 0;
  };
  // Wait for the balancer to find the replica up (its checks every 300 ms).
  for (int i = 0; i < 50 && !client::ProviderClient::connect(co).ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // One source spends its burst and more: the uploads past the burst are refused ...
  EXPECT_GE(rate_limited("127.0.0.7", 16), 5u);
  // ... and another source, through the same balancer, is not limited by it,
  EXPECT_EQ(rate_limited("127.0.0.8", 3), 0u);
  // nor is a gRPC client on 127.0.0.1: its key upload is served.
  auto cl = client::ProviderClient::connect(co);
  ASSERT_TRUE(cl.ok()) << cl.status().to_string();
  const auto params = *ckks::Params::create(*ckks::preset_literal(ckks::kDefaultServicePreset));
  auto session = *client::RerankSession::create(params, 16, testing::test_prng(99));
  const auto up = (*cl)->upload_keys(*session.make_key_upload(4, false));
  ASSERT_TRUE(up.ok()) << up.status().to_string();
  EXPECT_FALSE(up->has_error()) << up->error().message();
}

TEST_F(ClusterTest, NoSearchFailsWhenAReplicaIsKilledMidBurstAndRestarted) {
  std::vector<std::unique_ptr<tools::SpawnedProvider>> replicas;
  std::vector<std::string> addresses;
  for (int i = 0; i < 3; ++i) {
    replicas.push_back(spawn(i, "127.0.0.1:0"));
    ASSERT_TRUE(replicas.back());
    addresses.push_back("127.0.0.1:" + std::to_string(replicas.back()->port()));
  }
  tools::BalancerSpec spec;
  spec.replicas = addresses;
  spec.check_interval_ms = 300;
  auto balancer = tools::SpawnedHaproxy::start(c.dir / "haproxy", spec);
  ASSERT_TRUE(balancer.ok()) << balancer.status().to_string();
  auto co = replicas[0]->connect_options();
  co.port = (*balancer)->port();  // one pinned certificate for the service

  // A private fetch registered now, through whichever replica the balancer picks.
  auto fetch_client = *client::ProviderClient::connect(co);
  client::FetchOptions fo;
  fo.allow_insecure = true;
  fo.wait_ms = 60000;
  auto fetcher = *client::PayloadFetcher::create(*fetch_client, manifest.version_id, fo);
  const auto first = fetcher->fetch(7);
  ASSERT_TRUE(first.ok()) << first.status().to_string();

  const auto params = *ckks::Params::create(*ckks::preset_literal(ckks::kDefaultServicePreset));
  constexpr int kClients = 8, kSearches = 50;
  std::atomic<int> done{0}, failed{0};
  std::vector<std::string> failures(kClients);
  std::vector<std::thread> clients;
  for (int t = 0; t < kClients; ++t) {
    clients.emplace_back([&, t] {
      Prng prng = testing::test_prng(7000 + static_cast<std::uint64_t>(t));
      auto cl = client::ProviderClient::connect(co);
      auto session = client::RerankSession::create(params, 16, testing::test_prng(8000 + t));
      if (!cl.ok() || !session.ok()) {
        failed += kSearches;
        return;
      }
      const std::vector<std::uint64_t> ids{5, 399, 0, 123};
      std::string key_id;
      for (int i = 0; i < kSearches; ++i) {
        Status s = [&]() -> Status {
          if (key_id.empty()) {
            PRIVSEARCH_ASSIGN_OR_RETURN(auto up_req, session->make_key_upload(ids.size(), false));
            PRIVSEARCH_ASSIGN_OR_RETURN(const auto up, (*cl)->upload_keys(up_req));
            if (up.has_error()) return client::provider_refusal("the keys", up.error());
            key_id = up.key_id();
            session->set_key_id(ids.size(), key_id);
          }
          const auto z = tools::random_unit_vector(16, prng);
          PRIVSEARCH_ASSIGN_OR_RETURN(const auto pending,
                                      session->build_request({z, ids, manifest.version_id}));
          PRIVSEARCH_ASSIGN_OR_RETURN(const auto resp, (*cl)->rerank(pending.request));
          return session->decode_response(pending, resp).status();
        }();
        if (!s.ok()) {
          ++failed;
          failures[static_cast<std::size_t>(t)] = s.to_string();
        }
        ++done;
      }
    });
  }
  // Mid-burst: SIGKILL one replica, and start it again on its port a second later.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (done.load() < kClients * kSearches / 4 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const int at_kill = done.load();
  ASSERT_TRUE(replicas[1]->signal(SIGKILL));
  replicas[1]->stop();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  replicas[1] = spawn(1, addresses[1]);
  ASSERT_TRUE(replicas[1]);
  for (auto& t : clients) t.join();
  EXPECT_LT(at_kill, kClients * kSearches);  // the kill happened during the burst
  EXPECT_EQ(done.load(), kClients * kSearches);
  EXPECT_EQ(failed.load(), 0);
  for (const auto& f : failures) EXPECT_EQ(f, "");

  // Two of three replicas killed and restarted: hintless needs no registration at all (ZipPIR's
  // lives in Redis), so the next fetch, through whichever replica, needs no new setup.
  for (int i : {0, 2}) {
    ASSERT_TRUE(replicas[static_cast<std::size_t>(i)]->signal(SIGKILL));
    replicas[static_cast<std::size_t>(i)]->stop();
    replicas[static_cast<std::size_t>(i)] = spawn(i, addresses[static_cast<std::size_t>(i)]);
    ASSERT_TRUE(replicas[static_cast<std::size_t>(i)]);
  }
  const auto second = fetcher->fetch(42);
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  EXPECT_EQ(fetcher->setups(), fetcher->hintless() ? 0u : 1u);  // hintless: never a setup
}

}  // namespace
}  // namespace privsearch
