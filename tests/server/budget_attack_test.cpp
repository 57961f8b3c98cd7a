// The score-oracle budgets attacked as docs/SECURITY.md describes the attacker, through a real
// provider process at its default limits over TLS on loopback:
// - a rerank budget counts exact scores, so one key epoch of K = max requests yields exactly the
//   scores a key epoch of K = 1 requests yields (before: 1024x as many), with four threads
//   racing on the last units;
// - access-private queries are metered for anonymous callers too (per address and window), with
//   three threads racing, where before an anonymous client was never refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <thread>
#include <vector>

#include "ckks/param_sets.h"
#include "client/provider_client.h"
#include "client/rerank_session.h"
#include "harness/random_vectors.h"
#include "harness/spawned_provider.h"
#include "harness/synthetic_index.h"
#include "index/artifacts/exact_store.h"
#include "index/build.h"
#include "pir/lwe/lwe64.h"
#include "protocol/identities.h"
#include "scoring/build.h"
#include "scoring/layout.h"
#include "testing/test_util.h"

namespace privsearch {
namespace {

constexpr std::size_t kDocs = 1536;  // more than max_candidates: K = 1024 distinct ids

class BudgetAttackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() /
          ("privsearch-budget-attack-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    const tools::Synthetic gen(32);
    vectors.rows = kDocs;
    vectors.cols = 32;
    for (std::size_t i = 0; i < kDocs; ++i) {
      const auto v = gen.vector(i);
      vectors.data.insert(vectors.data.end(), v.begin(), v.end());
    }
    docs.resize(kDocs);
    for (std::size_t i = 0; i < kDocs; ++i) docs[i].id = "d" + std::to_string(i);
    o.out = dir / "index";
    o.vectors = &vectors;
    o.documents = &docs;
    o.encoder_id = "test";
    o.dim = 16;
    o.pq_m = 4;
    o.record_bytes = 64;
    scoring::ScoringBuildOptions so;
    so.cluster_rows = 128;
    so.cluster_dim = 8;
    o.extra_artifacts = scoring::scoring_artifacts_for_build(so);
    auto built = index::build_index(o, nullptr);
    ASSERT_TRUE(built.ok()) << built.status().to_string();
    manifest = *built;
    tools::ProviderLaunch launch(o.out, dir / "work", {"--threads", "2", "--no-pir"});
    launch.binary = PRIVSEARCH_PROVIDER_BIN;
    launch.start_timeout = std::chrono::seconds(60);
    auto p = tools::SpawnedProvider::start(launch);
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    provider = std::move(p).value();
  }
  void TearDown() override {
    provider.reset();
    std::filesystem::remove_all(dir);
  }

  std::unique_ptr<client::ProviderClient> connect() {
    return *client::ProviderClient::connect(provider->connect_options());
  }

  // One key epoch of K-candidate requests sent by `threads` threads until the provider
  // refuses; the exact scores the epoch yielded.
  std::uint64_t drain_key_epoch(std::size_t k, int threads) {
    const auto params = *ckks::Params::create(*ckks::preset_literal(ckks::kDefaultServicePreset));
    auto session = *client::RerankSession::create(params, 16, Prng::create());
    auto cl = connect();
    const auto up = *cl->upload_keys(*session.make_key_upload(k, false));
    EXPECT_FALSE(up.has_error()) << up.error().message();
    session.set_key_id(k, up.key_id());
    std::atomic<std::uint64_t> scores{0};
    std::atomic<int> wrong_refusals{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&] {
        auto own = connect();
        Prng prng = Prng::create();
        for (int round = 0; round < 400; ++round) {
          std::vector<std::uint64_t> ids;
          const std::uint64_t start = prng.uniform_below(kDocs);
          for (std::size_t i = 0; i < k; ++i) ids.push_back((start + i) % kDocs);
          const auto z = tools::random_unit_vector(16, prng);
          const auto pending = *session.build_request({z, ids, manifest.version_id});
          const auto resp = own->rerank(pending.request);
          if (!resp.ok() || resp->has_error()) {
            if (!resp.ok() || resp->error().code() != v1::BUDGET_EXHAUSTED) ++wrong_refusals;
            return;
          }
          scores += k;
        }
      });
    }
    for (auto& th : pool) th.join();
    EXPECT_EQ(wrong_refusals.load(), 0);
    return scores.load();
  }

  std::filesystem::path dir;
  index::Matrix vectors;
  std::vector<index::Document> docs;
  index::BuildOptions o;
  index::Manifest manifest;
  std::unique_ptr<tools::SpawnedProvider> provider;
};

TEST_F(BudgetAttackTest, LargeRequestsBuyNoMoreScoresThanSmallOnes) {
  auto cl = connect();
  const auto info = *cl->server_info();
  const std::uint64_t budget = info.limits().scores_per_key_id();
  const std::uint64_t k_max = info.limits().max_candidates();
  ASSERT_EQ(k_max, 1024u);         // the default limits
  ASSERT_EQ(budget, 512u * 100u);  // 512 searches of K = 100
  const std::uint64_t big = drain_key_epoch(k_max, 4);
  std::fprintf(stderr, "one key epoch at K = %llu: %llu exact scores (budget %llu)\n",
               static_cast<unsigned long long>(k_max), static_cast<unsigned long long>(big),
               static_cast<unsigned long long>(budget));
  EXPECT_LE(big, budget);
  EXPECT_EQ(big, budget / k_max * k_max);  // every request that fits was served, no more
  // K = 1 against the same budget: each request spends exactly one unit, so the epoch's total
  // is the same `budget` scores (the remaining count after n requests is budget - n).
  const auto params = *ckks::Params::create(*ckks::preset_literal(ckks::kDefaultServicePreset));
  auto session = *client::RerankSession::create(params, 16, Prng::create());
  const auto up = *cl->upload_keys(*session.make_key_upload(1, false));
  ASSERT_FALSE(up.has_error());
  EXPECT_EQ(up.score_budget(), budget);
  session.set_key_id(1, up.key_id());
  Prng prng = testing::test_prng(5);
  const auto store = *index::ExactStore::open(o.out / manifest.find("exact_store")->file);
  for (std::uint64_t n = 1; n <= 64; ++n) {
    const auto z = tools::random_unit_vector(16, prng);
    const std::vector<std::uint64_t> one{n};
    const auto pending = *session.build_request({z, one, manifest.version_id});
    const auto resp = *cl->rerank(pending.request);
    ASSERT_FALSE(resp.has_error()) << resp.error().message();
    ASSERT_EQ(resp.scores_remaining(), budget - n);
    // The scores served are the real ones (metering did not cost correctness).
    const auto got = *session.decode_response(pending, resp);
    double want = 0;
    for (std::size_t j = 0; j < 16; ++j) want += z[j] * store.row(n)[j];
    EXPECT_NEAR(got[0], want, 1e-3);
  }
}

TEST_F(BudgetAttackTest, AnonymousPrivateScoringIsMeteredPerAddress) {
  auto cl = connect();
  const auto info = *cl->server_info();
  const std::uint64_t budget = info.limits().private_queries_per_window();
  const std::uint32_t m = info.limits().max_private_queries();
  ASSERT_EQ(budget, 4096u);  // the default: 512 searches at m = 8
  ASSERT_EQ(m, 8u);
  const auto matrix = *scoring::load_matrix(o.out / scoring::kMatrixFile);
  v1::PrivateScoreRequest req;
  req.set_artifact_version(manifest.version_id);
  req.set_queries(m);
  req.set_ciphertexts(std::string(
      m * matrix.stride * pir::lwe64_entry_bytes(static_cast<int>(matrix.query_drop_bits)), '\0'));
  std::atomic<std::uint64_t> served{0};
  std::atomic<int> quota{0}, other{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < 3; ++t) {
    pool.emplace_back([&] {
      auto own = connect();
      for (int i = 0; i < 1000; ++i) {
        const auto r = own->private_score(req);
        if (!r.ok() || r->has_error()) {
          (r.ok() && r->error().code() == v1::QUOTA_EXHAUSTED ? quota : other)++;
          return;
        }
        served += m;
      }
    });
  }
  for (auto& th : pool) th.join();
  std::fprintf(stderr, "anonymous access-private queries served before refusal: %llu\n",
               static_cast<unsigned long long>(served.load()));
  EXPECT_EQ(served.load(), budget);  // exactly the window's budget, racing threads included
  EXPECT_EQ(quota.load(), 3);
  EXPECT_EQ(other.load(), 0);
  const auto refused = *cl->private_score(req);
  ASSERT_TRUE(refused.has_error());
  EXPECT_NE(refused.error().message().find("this address"), std::string::npos)
      << refused.error().message();
}

}  // namespace
}  // namespace privsearch

namespace privsearch {
namespace {

// Identities bound exact scores at the default settings (issue 52: the identity budget used to
// default to none, and one identity took 11 key epochs in 12 s). One identity re-keys as fast as
// it likes (the upload rate taken out of the way: the bound must not rest on it) at K = 1024,
// the most candidates a request may name: over all its key epochs it gets exactly the default
// identity budget, 2^20 scores a day, then QUOTA_EXHAUSTED under any new key set.
TEST_F(BudgetAttackTest, AnIdentityRekeyingAtKMaxGetsTheDefaultBudgetOnly) {
  const std::string token = protocol::new_token();
  std::ofstream(dir / "tokens") << protocol::token_line("mallory", token) << "\n";
  tools::ProviderLaunch launch(o.out, dir / "work-identity",
                               {"--threads", "2", "--no-pir", "--auth-tokens",
                                (dir / "tokens").string(), "--key-uploads-per-minute", "0"});
  launch.binary = PRIVSEARCH_PROVIDER_BIN;
  launch.start_timeout = std::chrono::seconds(60);
  auto with_tokens = tools::SpawnedProvider::start(launch);
  ASSERT_TRUE(with_tokens.ok()) << with_tokens.status().to_string();
  auto co = (*with_tokens)->connect_options();
  co.bearer_token = token;
  auto cl = *client::ProviderClient::connect(co);
  const auto info = *cl->server_info();
  const std::uint64_t k = info.limits().max_candidates();
  ASSERT_EQ(k, 1024u);
  ASSERT_EQ(info.limits().scores_per_identity(), std::uint64_t{1} << 20);  // the default
  const auto params = *ckks::Params::create(*ckks::preset_literal(ckks::kDefaultServicePreset));
  Prng prng = testing::test_prng(52);
  std::uint64_t scores = 0;
  int epochs = 0, refused_at_once = 0;
  while (epochs < 40 && refused_at_once == 0) {
    ++epochs;
    auto session = *client::RerankSession::create(params, 16, Prng::create());
    const auto up = *cl->upload_keys(*session.make_key_upload(k, false));
    ASSERT_FALSE(up.has_error()) << up.error().message();
    session.set_key_id(k, up.key_id());
    for (int served = 0;; ++served) {
      std::vector<std::uint64_t> ids(k);
      const std::uint64_t start = prng.uniform_below(kDocs);
      for (std::size_t i = 0; i < k; ++i) ids[i] = (start + i) % kDocs;
      const auto z = tools::random_unit_vector(16, prng);
      const auto resp = *cl->rerank(session.build_request({z, ids, manifest.version_id})->request);
      if (resp.has_error()) {
        // The key epoch's budget ends an epoch; the identity's (QUOTA_EXHAUSTED) ends them all.
        const auto code = resp.error().code();
        ASSERT_TRUE(code == v1::BUDGET_EXHAUSTED || code == v1::QUOTA_EXHAUSTED)
            << resp.error().message();
        refused_at_once = code == v1::QUOTA_EXHAUSTED ? 1 : 0;
        break;
      }
      scores += k;
    }
  }
  EXPECT_EQ(scores, std::uint64_t{1} << 20);  // 1,024 requests of K = 1024
  EXPECT_EQ(refused_at_once, 1);
  EXPECT_EQ(epochs, 21);  // 20 whole epochs of 50 requests, then 24 in the 21st
}

}  // namespace
}  // namespace privsearch
