// The provider under a hostile client (docs/SECURITY.md, "abuse"), over real TLS on loopback: each
// test reproduces one abuse class of SECURITY.md against a privsearch-provider process and checks
// the provider's memory stays bounded and a legitimate client is still served.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "ckks/param_sets.h"
#include "client/payload_fetcher.h"
#include "client/provider_client.h"
#include "client/rerank_session.h"
#include "core/bytes.h"
#include "harness/measure.h"
#include "harness/random_vectors.h"
#include "harness/spawned_haproxy.h"
#include "harness/spawned_provider.h"
#include "harness/stalled_streams.h"
#include "index/artifacts/exact_store.h"
#include "index/artifacts/payload_store.h"
#include "index/build.h"
#include "pir/zippir/zippir_client.h"
#include "protocol/identities.h"
#include "server/hostile_fixture.h"
#include "testing/test_util.h"
#include "testing/tiny_collection.h"

namespace privsearch {
namespace {

// Row 1: 20 connections x 10 streams announce 8 MB messages and never finish them. Before the
// transport limits the provider buffered ~8 MB per stream (1.66 GB). Now the provider retires
// its connections at max-age + grace, which bounds what they can send: through the HTTP/2 front
// (the default) the front then resets every stream of the attacker (and drops the connection
// after --front-client-timeout-s without progress); without it gRPC closes the connection. The
// heap is given back after.
TEST_F(HostileClientTest, StalledStreamsAreBoundedAndRetired) {
  const auto provider = spawn(
      {"--transport-memory-mb", "64", "--connection-max-age-s", "2", "--connection-grace-s", "2"});
  ASSERT_NE(provider, nullptr);
  ASSERT_TRUE(legit_search(*provider).ok());
  const std::uint64_t baseline = tools::process_rss_bytes(provider->pid());
  tools::StalledStreamsSpec spec;
  spec.port = provider->port();
  auto attack = tools::StalledStreams::start(spec);
  ASSERT_TRUE(attack.ok()) << attack.status().to_string();
  const std::uint64_t streams = spec.streams_per_connection * (*attack)->connections();
  // Every stream ended: reset on its own, or with its connection.
  auto all_ended = [&] {
    return (*attack)->streams_reset() +
               (*attack)->connections_closed() * spec.streams_per_connection >=
           streams;
  };
  std::uint64_t peak = baseline;
  // Retired after max age + grace (4 s); up to 20 s for a loaded machine (CI runs two tests at
  // once), leaving as soon as every stream has ended.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < until && !all_ended()) {
    peak = std::max(peak, tools::process_rss_bytes(provider->pid()));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::fprintf(stderr,
               "stalled streams: rss %.0f MB -> peak %.0f MB, %.1f MB sent, %llu streams reset, "
               "%llu/%zu connections closed\n",
               static_cast<double>(baseline) / 1e6, static_cast<double>(peak) / 1e6,
               static_cast<double>((*attack)->body_bytes_sent()) / 1e6,
               static_cast<unsigned long long>((*attack)->streams_reset()),
               static_cast<unsigned long long>((*attack)->connections_closed()),
               (*attack)->connections());
  // 200 announced 8 MB messages: 1.6 GB if buffered. gRPC 1.51 does not hold incoming message
  // assembly to the 64 MB quota (measured without the front: +127 to +319 MB over baseline on a
  // 2-core machine, growing with what the attacker sends before the connections are retired),
  // so the bound checked is the target, baseline + 512 MB, not the quota.
  if (kRssIsMeaningful) {
    EXPECT_LT(peak, baseline + (std::uint64_t{512} << 20));
  }
  EXPECT_TRUE(all_ended());
  EXPECT_TRUE(legit_search(*provider).ok());
  attack->reset();
  // And the memory goes back: the provider trims its heap every 10 s (tools/provider/main.cpp),
  // so within 60 s of the attack its RSS is back within 64 MB of the baseline (before the trim
  // it stayed at the peak: M_TRIM_THRESHOLD keeps 512 MB of free heap).
  std::uint64_t after = tools::process_rss_bytes(provider->pid());
  const auto back_by = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < back_by &&
         after > baseline + (std::uint64_t{64} << 20)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    after = tools::process_rss_bytes(provider->pid());
  }
  std::fprintf(stderr, "stalled streams: rss after the attack %.0f MB\n",
               static_cast<double>(after) / 1e6);
  if (kRssIsMeaningful) {
    EXPECT_LT(after, baseline + (std::uint64_t{64} << 20));
  }
}

// Row 2: many distinct valid key sets (each a new key epoch). Before, each cost ~23 MB of RSS
// with only a count bound (64 sets: 1.5 GB), and at the default 512 MB cache the process kept
// +704 MB after the churn. Now the cache is bounded in bytes, and sets no request used are
// evicted after --key-unused-s (2 s here, 30 by default; the provider looks every 10 s), so the
// memory goes back while the legitimate client's set, in use, stays.
TEST_F(HostileClientTest, ManyKeySetsStayWithinTheKeyCacheBytes) {
  const auto provider =
      spawn({"--key-cache-mb", "64", "--key-uploads-per-minute", "0", "--key-unused-s", "2"});
  ASSERT_NE(provider, nullptr);
  ASSERT_TRUE(legit_search(*provider).ok());
  const std::uint64_t baseline = tools::process_rss_bytes(provider->pid());
  auto cl = *client::ProviderClient::connect(provider->connect_options());
  const auto params = *ckks::Params::create(*ckks::preset_literal(ckks::kDefaultServicePreset));
  std::uint64_t peak = baseline;
  int accepted = 0;
  for (int i = 0; i < 24; ++i) {  // 24 x K = 100 sets: ~550 MB if all were kept
    auto session = *client::RerankSession::create(params, 16, Prng::create());
    const auto up = *cl->upload_keys(*session.make_key_upload(100, false));
    accepted += up.has_error() ? 0 : 1;
    peak = std::max(peak, tools::process_rss_bytes(provider->pid()));
  }
  const auto info = *cl->server_info();
  std::fprintf(stderr, "key sets: rss %.0f MB -> peak %.0f MB, %d accepted\n",
               static_cast<double>(baseline) / 1e6, static_cast<double>(peak) / 1e6, accepted);
  EXPECT_EQ(accepted, 24);  // every upload served: old sets are evicted, not new ones refused
  EXPECT_EQ(info.limits().key_cache_bytes(), std::uint64_t{64} << 20);
  if (kRssIsMeaningful) {
    EXPECT_LT(peak, baseline + (std::uint64_t{160} << 20));
  }
  EXPECT_TRUE(legit_search(*provider).ok());
  // A client whose set is in use keeps it; the churn's last set, never used, goes within 2 s +
  // the 10 s upkeep period (the tiny index's sets are too small to see in the RSS).
  auto legit = legit_client(*provider);
  ASSERT_TRUE(legit.ok()) << legit.status().to_string();
  ASSERT_TRUE(legit_rerank(*legit).ok());
  auto unused = *client::RerankSession::create(params, 16, Prng::create());
  const auto unused_up = *cl->upload_keys(*unused.make_key_upload(4, false));
  ASSERT_FALSE(unused_up.has_error());
  unused.set_key_id(4, unused_up.key_id());
  const std::vector<std::uint64_t> ids{1, 2, 3, 4};
  const auto pending =
      *unused.build_request({tools::random_unit_vector(16, prng), ids, manifest.version_id});
  // One probe only, once the upkeep has surely run (a probe would mark the set used).
  for (int second = 0; second < 14; ++second) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    ASSERT_TRUE(legit_rerank(*legit).ok());  // in use: kept
  }
  const auto probe = *cl->rerank(pending.request);
  const v1::ErrorCode code = probe.has_error() ? probe.error().code() : v1::ERROR_CODE_UNSPECIFIED;
  EXPECT_EQ(code, v1::UNKNOWN_KEY_ID) << "an unused key set outlived --key-unused-s";
  EXPECT_TRUE(legit_rerank(*legit).ok());
}

// Row 3: a flood of PIR setups (each queues minutes of hint work under real parameters). Before,
// 256 were accepted in 2 s and then every client got PIR_LIMIT until a restart. Now setups are
// rate-limited per identity, and a legitimate client's first hint is scheduled before anyone's
// second.
TEST_F(HostileClientTest, PirSetupFloodDoesNotLockOthersOut) {
  const std::string mallory = protocol::new_token(), alice = protocol::new_token();
  std::ofstream(c.dir / "tokens") << protocol::token_line("mallory", mallory) << "\n"
                                  << protocol::token_line("alice", alice) << "\n";
  const auto provider = spawn({"--pir-test-params", "--pir-backend", "zippir", "--auth-tokens",
                               (c.dir / "tokens").string(), "--pir-max-clients", "16"});
  ASSERT_NE(provider, nullptr);
  auto co = provider->connect_options();
  co.bearer_token = mallory;
  auto attacker = *client::ProviderClient::connect(co);
  const auto info = *attacker->pir_info();
  const auto pub = *pir::ZipPirPublicInfo::deserialize(byte_view(info.info()), true);
  int accepted = 0, limited = 0;
  for (int i = 0; i < 60; ++i) {
    auto forged = *pir::ZipPirClient::create(pub, prng);  // a valid key nobody will use
    v1::PirSetupRequest req;
    req.set_artifact_version(manifest.version_id);
    req.set_setup(to_byte_string(forged.setup_message()));
    const auto resp = *attacker->pir_setup(req);
    if (!resp.has_error()) ++accepted;
    if (resp.has_error() && resp.error().code() == v1::RATE_LIMITED) ++limited;
  }
  std::fprintf(stderr, "PIR setup flood: %d accepted, %d rate-limited of 60\n", accepted, limited);
  EXPECT_LE(accepted, 7);  // burst 5 plus what 10 a minute refills meanwhile
  EXPECT_EQ(accepted + limited, 60);
  // Alice registers and fetches: not locked out, not queued behind the forged clients' hints.
  co.bearer_token = alice;
  auto transport = *client::ProviderClient::connect(co);
  client::FetchOptions fo;
  fo.allow_insecure = true;
  fo.wait_ms = 60000;
  auto fetcher = client::PayloadFetcher::create(*transport, manifest.version_id, fo);
  ASSERT_TRUE(fetcher.ok()) << fetcher.status().to_string();
  const auto text = (*fetcher)->fetch(11);
  ASSERT_TRUE(text.ok()) << text.status().to_string();
  EXPECT_NE(text->find("document 11"), std::string::npos);
}

// A PIR registration is bound to the identity that made it: mallory, who saw alice's client id
// and recorded her query, asks for its status and replays the query under her own token. Before,
// both were answered (and the replay burned alice's ready hint); now both answer as for an
// unknown client, and alice's own query is answered afterwards with her record.
TEST_F(HostileClientTest, AnotherIdentityCannotUseAVictimsPirRegistration) {
  const std::string mallory = protocol::new_token(), alice = protocol::new_token();
  std::ofstream(c.dir / "tokens") << protocol::token_line("mallory", mallory) << "\n"
                                  << protocol::token_line("alice", alice) << "\n";
  const auto provider = spawn({"--pir-test-params", "--pir-backend", "zippir", "--auth-tokens",
                               (c.dir / "tokens").string()});
  ASSERT_NE(provider, nullptr);
  auto co = provider->connect_options();
  co.bearer_token = alice;
  auto as_alice = *client::ProviderClient::connect(co);
  co.bearer_token = mallory;
  auto as_mallory = *client::ProviderClient::connect(co);
  const auto info = *as_alice->pir_info();
  const auto pub = *pir::ZipPirPublicInfo::deserialize(byte_view(info.info()), true);
  auto victim = *pir::ZipPirClient::create(pub, prng);
  v1::PirSetupRequest setup;
  setup.set_artifact_version(manifest.version_id);
  setup.set_setup(to_byte_string(victim.setup_message()));
  const auto registered = *as_alice->pir_setup(setup);
  ASSERT_FALSE(registered.has_error()) << registered.error().message();
  v1::PirStatusRequest status;
  status.set_artifact_version(manifest.version_id);
  status.set_client_id(registered.client_id());
  for (int i = 0; i < 600; ++i) {  // up to 60 s for the first hint
    const auto st = *as_alice->pir_status(status);
    ASSERT_FALSE(st.has_error()) << st.error().message();
    if (st.ready_query_indices_size() > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::optional<pir::ZipPirPendingQuery> pending;
  const auto query = *victim.query(11, prng, pending);
  v1::PirQueryRequest q;
  q.set_artifact_version(manifest.version_id);
  q.set_query(to_byte_string(query));
  // Mallory: the status and the replayed query are refused as an unknown client.
  const auto spied = *as_mallory->pir_status(status);
  ASSERT_TRUE(spied.has_error());
  EXPECT_EQ(spied.error().code(), v1::UNKNOWN_PIR_CLIENT);
  const auto replayed = *as_mallory->pir_query(q);
  ASSERT_TRUE(replayed.has_error());
  EXPECT_EQ(replayed.error().code(), v1::UNKNOWN_PIR_CLIENT);
  // Alice's hint was not spent: her query is answered and decodes to document 11.
  const auto answered = *as_alice->pir_query(q);
  ASSERT_FALSE(answered.has_error()) << answered.error().message();
  const auto record = victim.extract(*pending, byte_view(answered.answer()));
  ASSERT_TRUE(record.ok()) << record.status().to_string();
  const auto text = index::PayloadStore::decode_record(record->data(), record->size());
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("document 11"), std::string::npos);
}

// Rows 5 and 6: the exact store changed in place, then truncated, under a running provider.
// Before: the zeroed document silently vanished from results, a SIGHUP reload kept the changed
// data, and truncation killed the provider with SIGBUS. Now: DATA_LOSS for the requests naming
// changed rows, correct scores for the others, no crash, and a failed reload keeps serving.
TEST_F(HostileClientTest, ChangedOrTruncatedStoreGivesDataLossNeverWrongScores) {
  const auto provider = spawn({});
  ASSERT_NE(provider, nullptr);
  const auto store_file = o.out / manifest.find("exact_store")->file;
  std::filesystem::copy_file(store_file, c.dir / "original.store");
  const auto original = *index::ExactStore::open(c.dir / "original.store");
  const std::vector<std::uint64_t> with_17{3, 17, 250, 399}, without{3, 18, 250, 100};
  EXPECT_EQ(rerank_checked(*provider, with_17, original), v1::ERROR_CODE_UNSPECIFIED);
  {  // zero row 17 in place (the store's rows follow a 64-byte header)
    std::fstream f(store_file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(64 + 17 * 16 * 4);
    const std::vector<char> zeros(16 * 4, 0);
    f.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
  }
  EXPECT_EQ(rerank_checked(*provider, with_17, original), v1::DATA_LOSS);
  EXPECT_EQ(rerank_checked(*provider, without, original), v1::ERROR_CODE_UNSPECIFIED);
  // A reload now fails the manifest's hash check and keeps the verified index.
  ASSERT_TRUE(provider->signal(SIGHUP));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(rerank_checked(*provider, with_17, original), v1::DATA_LOSS);
  EXPECT_EQ(rerank_checked(*provider, without, original), v1::ERROR_CODE_UNSPECIFIED);
  // Truncated to 200 rows: requests naming later rows are refused, the provider lives on.
  std::filesystem::resize_file(store_file, 64 + 200 * 16 * 4);
  EXPECT_EQ(rerank_checked(*provider, {3, 18, 250, 100}, original), v1::DATA_LOSS);
  EXPECT_EQ(rerank_checked(*provider, {3, 18, 150, 100}, original), v1::ERROR_CODE_UNSPECIFIED);
  const int status = provider->stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// Connections in total and per source address: gRPC 1.51 cannot cap them, the balancer in front
// of the replicas does (HAProxy 2.6, TLS passed through). An attacker on 127.0.0.2 gets at most
// its per-source share of connections; a client on 127.0.0.1 is served through the balancer,
// also after one replica is killed.
TEST_F(HostileClientTest, BalancerCapsConnectionsPerSourceAndRoutesAroundADeadReplica) {
  const auto certificate = tools::write_shared_certificate(c.dir);
  ASSERT_TRUE(certificate.ok()) << certificate.status().to_string();
  std::vector<std::unique_ptr<tools::SpawnedProvider>> replicas;
  for (const char* work : {"replica-a", "replica-b"}) {
    tools::ProviderLaunch launch(o.out, c.dir / work, {"--threads", "2", "--no-pir"});
    launch.binary = PRIVSEARCH_PROVIDER_BIN;
    certificate->apply(launch);
    launch.trust_proxy_from = {tools::kLoopbackBalancerSource};  // the balancer (PROXY v2)
    auto p = tools::SpawnedProvider::start(launch);
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    replicas.push_back(std::move(p).value());
  }
  tools::BalancerSpec spec;
  for (const auto& r : replicas) spec.replicas.push_back("127.0.0.1:" + std::to_string(r->port()));
  // Each legitimate search opens up to two connections (the certificate fetch, the channel),
  // and a closed one may still count for a moment on a loaded machine: 8, not fewer, so the
  // legitimate client's own churn never meets the cap the attacker's 20 do.
  spec.max_connections_per_source = 8;
  spec.check_interval_ms = 300;
  auto balancer = tools::SpawnedHaproxy::start(c.dir / "haproxy", spec);
  ASSERT_TRUE(balancer.ok()) << balancer.status().to_string();
  auto co = replicas[0]->connect_options();
  co.port = (*balancer)->port();  // the same pinned certificate, through the balancer
  ASSERT_TRUE(legit_search(co).ok());

  tools::StalledStreamsSpec attack_spec;
  attack_spec.port = (*balancer)->port();
  attack_spec.source = "127.0.0.2";
  attack_spec.connections = 20;
  attack_spec.streams_per_connection = 2;
  auto attack = tools::StalledStreams::start(attack_spec);
  ASSERT_TRUE(attack.ok()) << attack.status().to_string();
  // Its share got through (the attack is real), the other 12 were refused at the balancer.
  EXPECT_GE((*attack)->connections(), 1u);
  EXPECT_LE((*attack)->connections(), 8u);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(legit_search(co).ok());

  ASSERT_TRUE(replicas[0]->signal(SIGKILL));
  replicas[0]->stop();
  // The balancer takes the dead replica out after its health checks fail (fall 2 at 100-300 ms);
  // until then a search may meet the dying replica's front on a loaded machine (seen: 1 in ~10
  // stress runs, "Handshake read failed"). Bounded wait for the first search served, then none
  // may fail.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  Status first = legit_search(co);
  while (!first.ok() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // paced, as a client retries
    first = legit_search(co);
  }
  ASSERT_TRUE(first.ok()) << "no search served 10 s after the kill: " << first.to_string();
  // Four more: every legitimate search here uploads a key set (a new client each time), and the
  // surviving replica's upload limit for this one address is a burst of 10 in all.
  int served = 0;
  std::string failures;
  for (int i = 0; i < 4; ++i) {
    const Status s = legit_search(co);
    served += s.ok() ? 1 : 0;
    if (!s.ok()) failures += s.to_string() + "\n";
  }
  EXPECT_EQ(served, 4) << failures;
}

}  // namespace
}  // namespace privsearch
