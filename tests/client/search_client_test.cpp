// The search client against an in-process provider over TLS, on a tiny index built with the
// built-in encoder and the real rerank-n8192 parameters: decrypted candidate scores equal the
// plaintext scores of the exact store, results are ranked, evicted keys are re-uploaded, and a
// provider serving another artifact version is refused at open().
#include "client/search_client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <fstream>
#include <thread>

#include "ckks/param_sets.h"
#include "index/artifacts/artifacts.h"
#include "index/artifacts/exact_store.h"
#include "index/build.h"
#include "index/encoders/lexical_encoder.h"
#include "net/tls.h"
#include "protocol/provider_core.h"
#include "server/provider_server.h"
#include "testing/lexical_index_test.h"

namespace privsearch::client {
namespace {

class SearchClientTest : public testing::LexicalIndexTest {
 protected:
  SearchClientTest() : LexicalIndexTest("search-client", 256) {}
  void SetUp() override { build(); }
  void start(const std::string& artifact_version, protocol::ProviderLimits limits = {},
             int flood_bits = 0) {
    auto config = config_for(artifact_version);
    config.limits = limits;
    config.flood_security_bits = flood_bits;
    serve(std::move(config));
  }
  // Plaintext <z, x_doc> with z the normalized projected query, as the client encrypts it.
  double plain_score(const std::string& text, std::uint64_t doc) {
    const auto z = projected(text);
    double norm = 0, dot = 0;
    for (std::size_t j = 0; j < z.size(); ++j) {
      norm += static_cast<double>(z[j]) * z[j];
      dot += static_cast<double>(z[j]) * store->row(doc)[j];
    }
    return dot / std::sqrt(norm);
  }
};

TEST_F(SearchClientTest, DecryptedScoresEqualPlaintextAndAreRanked) {
  start(manifest.version_id);
  auto sc = *SearchClient::open(o.out, transport());
  SearchOptions so;
  so.candidates = 20;
  so.top = 5;
  const std::string q = "Title 17 text of document 17";
  const auto r = *sc->search(Query::text(q), so);
  ASSERT_EQ(r.candidates.size(), 20u);
  ASSERT_EQ(r.hits.size(), 5u);
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    const double want = plain_score(q, r.candidates[i]);
    EXPECT_NEAR(r.candidate_scores[i], want, 1e-4 * std::max(1.0, std::abs(want))) << i;
  }
  for (std::size_t i = 1; i < r.hits.size(); ++i) EXPECT_GE(r.hits[i - 1].score, r.hits[i].score);
  EXPECT_EQ(r.hits[0].title.rfind("Title ", 0), 0u) << r.hits[0].title;
  EXPECT_GT(r.timing[Stage::kKeyUpload].bytes_sent, 0u);
  EXPECT_GT(r.timing[Stage::kRpc].bytes_sent, 0u);
  // The second query of the same key epoch and K uploads nothing.
  EXPECT_EQ(sc->search(Query::text("document 3"), so)->timing[Stage::kKeyUpload].bytes_sent, 0u);
}

// A float16 exact store (--store-dtype float16): the provider widens the rows it gathers, and the
// decrypted scores are those of the binary16-rounded rows (within 2^-11 relative of float32).
TEST_F(SearchClientTest, Float16StoreScoresAreThoseOfItsRoundedRows) {
  o.out = c.dir / "index16";
  o.store_dtype = index::StoreDtype::kFloat16;
  manifest = *index::build_index(o, nullptr);
  EXPECT_EQ(manifest.dtype, "float16");
  const auto fp32 = std::move(store);
  store = std::make_unique<index::ExactStore>(*index::ExactStore::open(o.out / "exact.store"));
  ASSERT_EQ(store->dtype(), index::StoreDtype::kFloat16);
  start(manifest.version_id);
  auto sc = *SearchClient::open(o.out, transport());
  SearchOptions so;
  so.candidates = 20;
  const std::string q = "Title 17 text of document 17";
  const auto r = *sc->search(Query::text(q), so);
  ASSERT_EQ(r.candidates.size(), 20u);
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    const double want = plain_score(q, r.candidates[i]);  // from the widened float16 rows
    EXPECT_NEAR(r.candidate_scores[i], want, 1e-4 * std::max(1.0, std::abs(want))) << i;
    for (std::size_t j = 0; j < store->cols(); ++j) {
      const float full = fp32->row(r.candidates[i])[j], half = store->row(r.candidates[i])[j];
      EXPECT_LE(std::abs(full - half), std::abs(full) * 0x1p-11f + 1e-7f);
    }
  }
}

// A provider that re-randomizes its responses: the client sees flood_security_bits in the
// server info, uploads its public key with the rotation keys, and gets the scores back at the
// (lower) flooded precision.
TEST_F(SearchClientTest, FloodingProviderGetsThePublicKeyAndScoresStillDecrypt) {
  start(manifest.version_id, {}, 2);
  auto sc = *SearchClient::open(o.out, transport());
  SearchOptions so;
  so.candidates = 20;
  so.top = 5;
  const std::string q = "Title 17 text of document 17";
  const auto r = sc->search(Query::text(q), so);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  // The upload carries the ~200 KB public key on top of the rotation keys.
  EXPECT_GT(r->timing[Stage::kKeyUpload].bytes_sent, 200000u);
  for (std::size_t i = 0; i < r->candidates.size(); ++i) {
    EXPECT_NEAR(r->candidate_scores[i], plain_score(q, r->candidates[i]), 1e-2) << i;
  }
}

TEST_F(SearchClientTest, EvictedKeysAreUploadedAgain) {
  protocol::ProviderLimits limits;
  limits.max_key_sets = 1;
  start(manifest.version_id, limits);
  auto sc = *SearchClient::open(o.out, transport());
  SearchOptions a, b;
  a.candidates = 10;
  b.candidates = 12;  // another layout, another key set: evicts the first
  ASSERT_TRUE(sc->search(Query::text("document 5"), a).ok());
  ASSERT_TRUE(sc->search(Query::text("document 5"), b).ok());
  const auto again = sc->search(Query::text("document 5"), a);  // UNKNOWN_KEY_ID, re-upload, retry
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_GT(again->timing[Stage::kKeyUpload].bytes_sent, 0u);
}

// One request in flight at a time at the provider: concurrent clients get OVERLOADED and ride it
// out with jittered retries instead of failing (bounded: 3 clients x 3 searches; the retries
// wait up to ~2.5 s, several requests' time even under the sanitizers).
TEST_F(SearchClientTest, OverloadedProviderIsRetriedNotFailed) {
  protocol::ProviderLimits limits;
  limits.max_concurrent_requests = 1;
  start(manifest.version_id, limits);
  constexpr int kClients = 3, kSearches = 3;
  std::vector<std::unique_ptr<SearchClient>> clients;
  for (int i = 0; i < kClients; ++i) clients.push_back(*SearchClient::open(o.out, transport()));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (std::size_t n = 0; n < clients.size(); ++n) {
    threads.emplace_back([&, n] {
      SearchOptions so;
      so.candidates = 20;
      for (int i = 0; i < kSearches; ++i) {
        if (!clients[n]->search(client::Query::text("document 5"), so).ok()) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(SearchClientTest, OtherArtifactVersionIsRefusedAtOpen) {
  start("some-other-version");
  EXPECT_EQ(SearchClient::open(o.out, transport()).status().code(),
            StatusCode::kFailedPrecondition);
}

TEST_F(SearchClientTest, ClientNeedsOnlyThePublicArtifacts) {
  start(manifest.version_id);
  const auto client_dir = c.dir / "client-copy";
  std::filesystem::copy(o.out, client_dir);
  std::filesystem::remove(client_dir / "exact.store");  // private: the client never has it
  auto sc = SearchClient::open(client_dir, transport());
  ASSERT_TRUE(sc.ok()) << sc.status().to_string();
  EXPECT_TRUE(sc.value()->search(client::Query::text("document 9"), SearchOptions{}).ok());
  {
    std::fstream f(client_dir / "pq.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x7f');
  }
  EXPECT_EQ(SearchClient::open(client_dir, transport()).status().code(), StatusCode::kDataLoss);
}

TEST_F(SearchClientTest, QueryWithoutKnownTermsIsAnError) {
  start(manifest.version_id);
  auto sc = *SearchClient::open(o.out, transport());
  EXPECT_EQ(sc->search(Query::text("zzzz qqqq"), SearchOptions{}).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace privsearch::client
