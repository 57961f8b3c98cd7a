// Identities and durable state at the process level (docs/SECURITY.md, "identities"): a provider
// started with bearer tokens refuses anonymous and unknown callers; an identity's budget holds
// across new key epochs and across a SIGKILL and restart (the journal is written before a request
// is answered); the restarted process has a new instance id, and a payload fetcher registered
// before the crash registers again by itself.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <vector>

#include "ckks/param_sets.h"
#include "client/payload_fetcher.h"
#include "client/provider_client.h"
#include "client/rerank_session.h"
#include "harness/random_vectors.h"
#include "harness/spawned_provider.h"
#include "harness/spawned_redis.h"
#include "index/build.h"
#include "protocol/identities.h"
#include "testing/test_util.h"
#include "testing/tiny_collection.h"

namespace privsearch {
namespace {

class ProviderIdentityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    o = testing::tiny_index_options(c, 128);
    manifest = *index::build_index(o, nullptr);
    token = protocol::new_token();
    // One certificate for both starts: clients pin it.
    auto cert = tools::write_shared_certificate(c.dir);
    ASSERT_TRUE(cert.ok()) << cert.status().to_string();
    certificate = *cert;
    std::ofstream(c.dir / "tokens") << "# test\n" << protocol::token_line("alice", token) << "\n";
  }
  std::unique_ptr<tools::SpawnedProvider> spawn(const std::string& listen,
                                                const std::string& work = "work",
                                                std::vector<std::string> extra = {}) {
    tools::ProviderLaunch launch(
        o.out, c.dir / work,
        {"--threads", "2", "--auth-tokens", (c.dir / "tokens").string(), "--scores-per-identity",
         "12", "--key-uploads-per-minute", "0", "--pir-test-params"});
    launch.extra_args.insert(launch.extra_args.end(), extra.begin(), extra.end());
    launch.binary = PRIVSEARCH_PROVIDER_BIN;
    launch.listen = listen;
    certificate.apply(launch);
    launch.start_timeout = std::chrono::seconds(60);
    auto p = tools::SpawnedProvider::start(launch);
    EXPECT_TRUE(p.ok()) << p.status().to_string();
    return p.ok() ? std::move(p).value() : nullptr;
  }
  std::unique_ptr<client::ProviderClient> connect(const tools::SpawnedProvider& p,
                                                  const std::string& bearer) {
    auto co = p.connect_options();
    co.bearer_token = bearer;
    return *client::ProviderClient::connect(co);
  }
  // One rerank of alice's under a new key epoch; the provider's refusal code (0: served).
  v1::ErrorCode rerank_once(client::ProviderClient& cl, client::RerankSession& session) {
    const std::vector<std::uint64_t> ids{5, 399, 0, 123};
    const auto up = *cl.upload_keys(*session.make_key_upload(ids.size(), false));
    if (up.has_error()) return up.error().code();
    session.set_key_id(ids.size(), up.key_id());
    const auto z = tools::random_unit_vector(16, prng);
    const auto pending = *session.build_request({z, ids, manifest.version_id});
    const auto resp = *cl.rerank(pending.request);
    if (resp.has_error()) return resp.error().code();
    EXPECT_TRUE(session.decode_response(pending, resp).ok());
    return v1::ERROR_CODE_UNSPECIFIED;
  }

  testing::Collection c{"provider-identity"};
  index::BuildOptions o;
  index::Manifest manifest;
  tools::SharedCertificate certificate;
  std::string token;
  Prng prng = testing::test_prng(9090);
};

TEST_F(ProviderIdentityTest, TokensBudgetsAndRestartsHold) {
  auto provider = spawn("127.0.0.1:0");
  ASSERT_NE(provider, nullptr);
  const std::uint16_t port = provider->port();
  auto cl = connect(*provider, token);
  const auto info = *cl->server_info();
  EXPECT_TRUE(info.auth_required());
  EXPECT_EQ(info.instance_id().size(), 32u);
  EXPECT_EQ(info.limits().scores_per_identity(), 12u);  // three requests of K = 4
  // Enforced limits are reported: half of the 2 worker threads per client, the transport's.
  EXPECT_EQ(info.limits().max_concurrent_per_client(), 1u);
  EXPECT_EQ(info.limits().transport_memory_bytes(), std::uint64_t{256} << 20);
  EXPECT_EQ(info.limits().message_receive_deadline_s(), 330u);
  EXPECT_EQ(info.limits().max_streams_per_connection(), 32u);
  EXPECT_EQ(info.budget_store(), "file:" + (c.dir / "work" / "provider-budgets.journal").string());
  const auto params = *ckks::Params::create(*ckks::preset_literal(info.params_name()));
  auto session = *client::RerankSession::create(params, 16, testing::test_prng(9091));

  // No token, or a token the provider does not know: refused before any work.
  auto anonymous = connect(*provider, "");
  EXPECT_EQ(rerank_once(*anonymous, session), v1::UNAUTHENTICATED);
  auto stranger = connect(*provider, protocol::new_token());
  EXPECT_EQ(rerank_once(*stranger, session), v1::UNAUTHENTICATED);
  EXPECT_EQ((*stranger->pir_info()).error().code(), v1::UNAUTHENTICATED);

  // Alice: two requests, each under a new key epoch, and a private fetch.
  EXPECT_EQ(rerank_once(*cl, session), v1::ERROR_CODE_UNSPECIFIED);
  EXPECT_EQ(rerank_once(*cl, session), v1::ERROR_CODE_UNSPECIFIED);
  client::FetchOptions fo;
  fo.allow_insecure = true;
  auto fetcher = *client::PayloadFetcher::create(*cl, manifest.version_id, fo);
  ASSERT_TRUE(fetcher->fetch(7).ok());

  // SIGKILL: nothing is flushed on the way out. Restart on the same port.
  ASSERT_TRUE(provider->signal(SIGKILL));
  const int killed = provider->stop();
  EXPECT_TRUE(WIFSIGNALED(killed));
  provider = spawn("127.0.0.1:" + std::to_string(port));
  ASSERT_NE(provider, nullptr);
  const auto restarted = *cl->server_info();
  EXPECT_NE(restarted.instance_id(), info.instance_id());
  // One request left of alice's 3, whatever key epoch she starts.
  EXPECT_EQ(rerank_once(*cl, session), v1::ERROR_CODE_UNSPECIFIED);
  EXPECT_EQ(rerank_once(*cl, session), v1::QUOTA_EXHAUSTED);
  EXPECT_EQ(rerank_once(*cl, session), v1::QUOTA_EXHAUSTED);
  // ZipPIR: the fetcher's registration died with the process, it sets up again on its own;
  // hintless: there is nothing to set up.
  const auto text = fetcher->fetch(7);
  ASSERT_TRUE(text.ok()) << text.status().to_string();
  EXPECT_NE(text->find("document 7"), std::string::npos) << *text;
  EXPECT_EQ(fetcher->setups(), fetcher->hintless() ? 0u : 2u);
  const int status = provider->stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST_F(ProviderIdentityTest, ASecondProviderOnTheSameJournalRefusesToStart) {
  auto first = spawn("127.0.0.1:0");
  ASSERT_NE(first, nullptr);
  tools::ProviderLaunch launch(o.out, c.dir / "work", {"--threads", "1"});
  launch.binary = PRIVSEARCH_PROVIDER_BIN;
  launch.start_timeout = std::chrono::seconds(60);
  const auto second = tools::SpawnedProvider::start(launch);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
}

// Two replicas on one Redis (protocol/redis_ledger.h): alice's budget of 3 is one budget across
// both, survives a Redis restart, and a replica whose Redis is down refuses rather than serve
// unmetered (STATE_UNAVAILABLE).
TEST_F(ProviderIdentityTest, ReplicasShareOneBudgetInRedisAndFailClosedWithoutIt) {
  auto redis = tools::SpawnedRedis::start(c.dir / "redis");
  ASSERT_TRUE(redis.ok()) << redis.status().to_string();
  const std::string url = (*redis)->url();
  auto a = spawn("127.0.0.1:0", "work-a", {"--state", url});
  auto b = spawn("127.0.0.1:0", "work-b", {"--state", url});
  ASSERT_TRUE(a && b);
  auto ca = connect(*a, token), cb = connect(*b, token);
  EXPECT_EQ((*ca->server_info()).budget_store(), url);
  const auto params = *ckks::Params::create(*ckks::preset_literal(ckks::kDefaultServicePreset));
  auto session = *client::RerankSession::create(params, 16, testing::test_prng(9092));
  EXPECT_EQ(rerank_once(*ca, session), v1::ERROR_CODE_UNSPECIFIED);
  EXPECT_EQ(rerank_once(*cb, session), v1::ERROR_CODE_UNSPECIFIED);
  EXPECT_EQ(rerank_once(*ca, session), v1::ERROR_CODE_UNSPECIFIED);
  EXPECT_EQ(rerank_once(*cb, session), v1::QUOTA_EXHAUSTED);
  EXPECT_EQ(rerank_once(*ca, session), v1::QUOTA_EXHAUSTED);
  (*redis)->stop();
  EXPECT_EQ(rerank_once(*ca, session), v1::STATE_UNAVAILABLE);
  auto again = tools::SpawnedRedis::start(c.dir / "redis");
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(rerank_once(*cb, session), v1::QUOTA_EXHAUSTED);  // the AOF kept alice's count
}

}  // namespace
}  // namespace privsearch
