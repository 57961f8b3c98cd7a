// Access-private search against an in-process provider over TLS, on a tiny index built with
// the scoring database and the real LWE parameters (n = 2048, q = 2^64): decrypted scores equal
// the plaintext integer scores of the chosen clusters, request and response sizes do not depend
// on the query, and every refusal is typed.
#include <gtest/gtest.h>

#include <map>

#include "client/search_client.h"
#include "index/artifacts/artifacts.h"
#include "index/artifacts/exact_store.h"
#include "index/artifacts/manifest_signature.h"
#include "index/artifacts/signing_key.h"
#include "index/build.h"
#include "index/encoders/lexical_encoder.h"
#include "net/tls.h"
#include "pir/lwe/lwe64.h"
#include "protocol/provider_core.h"
#include "scoring/build.h"
#include "scoring/client/private_query.h"
#include "server/provider_server.h"
#include "testing/lexical_index_test.h"

namespace privsearch::client {
namespace {

class PrivateSearchTest : public testing::LexicalIndexTest {
 protected:
  PrivateSearchTest() : LexicalIndexTest("private-search", 256) {}
  void SetUp() override {
    scoring::ScoringBuildOptions so;
    so.cluster_rows = 64;  // 400 documents: 7 clusters of 64 slots
    so.cluster_dim = 8;
    o.extra_artifacts = scoring::scoring_artifacts_for_build(so);
    build();
  }
  void start(const std::string& artifact_version, bool with_matrix = true,
             protocol::ProviderLimits limits = {}) {
    auto config = config_for(artifact_version);
    config.limits = limits;
    if (with_matrix) {
      config.scoring_matrix = std::make_shared<const scoring::ScoringMatrix>(
          *scoring::load_matrix(o.out / scoring::kMatrixFile));
    }
    serve(std::move(config));
  }
};

TEST_F(PrivateSearchTest, ScoresEqualPlaintextIntegersAndSizesDoNotDependOnTheQuery) {
  start(manifest.version_id);
  auto sc = *SearchClient::open(o.out, transport());
  ASSERT_TRUE(sc->has_private_scoring());
  const auto layout = *scoring::load_layout(o.out / scoring::kLayoutFile);
  const auto matrix = *scoring::load_matrix(o.out / scoring::kMatrixFile);
  EXPECT_EQ(layout.shape.clusters, 7u);
  auto po = access_private_search();
  po.clusters = 3;
  po.top = 400;
  std::size_t request_bytes = 0, response_bytes = 0;
  for (const std::string q :
       {"Title 17 text of document 17", "document 250", "Title 3", "text of document 399"}) {
    const auto r = sc->search(Query::text(q), po);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    ASSERT_EQ(r->private_clusters.size(), 3u);
    // Every document of the 3 clusters, with its exact integer score M u.
    const auto u = scoring::quantize_query(layout, projected(q));
    std::map<std::uint64_t, double> want;
    for (std::uint32_t cl : r->private_clusters) {
      for (const auto& d : scoring::plaintext_cluster_scores(layout, matrix, u, cl)) {
        want[d.doc] = static_cast<double>(d.score);
      }
    }
    ASSERT_EQ(r->hits.size(), want.size());
    for (std::size_t i = 0; i < r->hits.size(); ++i) {
      EXPECT_EQ(r->hits[i].score, want.at(r->hits[i].doc)) << q << " doc " << r->hits[i].doc;
      if (i > 0) {
        EXPECT_GE(r->hits[i - 1].score, r->hits[i].score);
      }
    }
    // What the provider sees: the same sizes for every query.
    if (request_bytes == 0) {
      request_bytes = r->timing[Stage::kRpc].bytes_sent;
      response_bytes = r->timing[Stage::kRpc].bytes_received;
    }
    EXPECT_EQ(r->timing[Stage::kRpc].bytes_sent, request_bytes) << q;
    EXPECT_EQ(r->timing[Stage::kRpc].bytes_received, response_bytes) << q;
  }
  // Masks prepared ahead of the query: the search makes none of its own.
  ASSERT_TRUE(sc->prepare_private(3).ok());
  const auto prepared = sc->search(Query::text("document 42"), po);
  ASSERT_TRUE(prepared.ok());
  EXPECT_EQ(prepared->timing[Stage::kMasks].ms, 0.0);
  // m = 1 and m = 7 (every cluster) work too.
  po.clusters = 1;
  EXPECT_TRUE(sc->search(Query::text("document 5"), po).ok());
  po.clusters = 7;
  const auto all = sc->search(Query::text("document 5"), po);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->hits.size(), 400u);
}

TEST_F(PrivateSearchTest, RefusalsAreTyped) {
  protocol::ProviderLimits limits;
  limits.max_private_queries = 4;
  start(manifest.version_id, true, limits);
  const auto& matrix = *core->config().scoring_matrix;
  auto ask = [&](std::size_t m, std::size_t bytes, const std::string& version) {
    v1::PrivateScoreRequest req;
    req.set_artifact_version(version);
    req.set_queries(static_cast<std::uint32_t>(m));
    req.set_ciphertexts(std::string(bytes, '\0'));
    return core->private_score(req);
  };
  const std::size_t one =
      matrix.stride * pir::lwe64_entry_bytes(static_cast<int>(matrix.query_drop_bits));
  EXPECT_FALSE(ask(2, 2 * one, manifest.version_id).has_error());
  EXPECT_EQ(ask(2, 2 * one, "other").error().code(), v1::WRONG_ARTIFACT_VERSION);
  EXPECT_EQ(ask(0, 0, manifest.version_id).error().code(), v1::MALFORMED_REQUEST);
  EXPECT_EQ(ask(5, 5 * one, manifest.version_id).error().code(), v1::MALFORMED_REQUEST);
  EXPECT_EQ(ask(2, 2 * one - 8, manifest.version_id).error().code(), v1::MALFORMED_REQUEST);
  EXPECT_EQ(ask(1, 2 * one, manifest.version_id).error().code(), v1::MALFORMED_REQUEST);
  // Nonzero padding past the matrix columns.
  if (matrix.stride > matrix.columns) {
    v1::PrivateScoreRequest req;
    req.set_artifact_version(manifest.version_id);
    req.set_queries(1);
    std::string bytes(one, '\0');
    bytes[matrix.columns * pir::lwe64_entry_bytes(static_cast<int>(matrix.query_drop_bits))] = 1;
    req.set_ciphertexts(bytes);
    EXPECT_EQ(core->private_score(req).error().code(), v1::MALFORMED_REQUEST);
  }
  // Through the client: more clusters than the provider's published limit is refused before
  // anything is sent, naming the limit.
  auto sc = *SearchClient::open(o.out, transport());
  auto po = access_private_search();
  po.clusters = 5;
  const auto r = sc->search(Query::text("document 5"), po);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("at most 4"), std::string::npos) << r.status().to_string();
}

TEST_F(PrivateSearchTest, IdentityBudgetAndMessageSizeApply) {
  protocol::ProviderLimits limits;
  limits.private_queries_per_window = 2;
  start(manifest.version_id, true, limits);
  const auto& matrix = *core->config().scoring_matrix;
  const std::size_t one =
      matrix.stride * pir::lwe64_entry_bytes(static_cast<int>(matrix.query_drop_bits));
  v1::PrivateScoreRequest req;
  req.set_artifact_version(manifest.version_id);
  req.set_queries(1);
  req.set_ciphertexts(std::string(one, '\0'));
  protocol::Caller alice{"alice", ""};
  EXPECT_FALSE(core->private_score(req, alice).has_error());
  EXPECT_FALSE(core->private_score(req, alice).has_error());
  EXPECT_EQ(core->private_score(req, alice).error().code(), v1::QUOTA_EXHAUSTED);
  EXPECT_FALSE(core->private_score(req, protocol::Caller{"bob", ""}).has_error());
  // Above the message-size limit.
  tls.stop();
  limits = {};
  limits.max_message_bytes = one / 2;
  start(manifest.version_id, true, limits);
  EXPECT_EQ(core->private_score(req).error().code(), v1::MESSAGE_TOO_LARGE);
}

TEST_F(PrivateSearchTest, ProviderWithoutTheMatrixIsTypedAndIndexWithoutItIsRefusedLocally) {
  start(manifest.version_id, /*with_matrix=*/false);
  auto sc = *SearchClient::open(o.out, transport());
  const auto r = sc->search(Query::text("document 5"), access_private_search());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("PRIVATE_SCORING_UNAVAILABLE"), std::string::npos)
      << r.status().to_string();
  // An index built without the scoring database: the client says so before any request.
  index::BuildOptions plain = o;
  plain.out = c.dir / "plain-index";
  plain.extra_artifacts = nullptr;
  const auto plain_manifest = *index::build_index(plain, nullptr);
  tls.stop();
  start(plain_manifest.version_id, false);
  auto plain_client = *SearchClient::open(plain.out, transport());
  EXPECT_FALSE(plain_client->has_private_scoring());
  EXPECT_EQ(
      plain_client->search(Query::text("document 5"), access_private_search()).status().code(),
      StatusCode::kFailedPrecondition);
}

TEST_F(PrivateSearchTest, LayoutCannotCarryAMatrixSeedOfItsOwn) {
  // A provider that wants its own A (it could hold a trapdoor) can only change the salt: the
  // seed is always the hash of the salt, whatever the layout object held when it was saved.
  auto layout = *scoring::load_layout(o.out / scoring::kLayoutFile);
  EXPECT_EQ(layout.matrix_seed, scoring::derive_matrix_seed(layout.matrix_salt));
  layout.matrix_seed[0] ^= 1;  // a chosen seed
  ASSERT_TRUE(scoring::save_layout(o.out / scoring::kLayoutFile, layout).ok());
  const auto reread = *scoring::load_layout(o.out / scoring::kLayoutFile);
  EXPECT_EQ(reread.matrix_seed, scoring::derive_matrix_seed(reread.matrix_salt));
  EXPECT_NE(reread.matrix_seed, layout.matrix_seed);
}

TEST_F(PrivateSearchTest, ReloadKeepsAnsweringThePreviousVersionThenSaysStale) {
  // keep_versions = 2: after one reload the previous version is still answered (rerank and
  // private scoring, existing and newly opened clients); after a second it is ARTIFACT_STALE
  // naming the newest version.
  auto make_core = [&](const std::string& version) {
    protocol::ProviderConfig config(*ckks::Params::create(*ckks::preset_literal("rerank-n8192")));
    config.params_name = "rerank-n8192";
    config.artifact_version = version;
    config.scoring_matrix = std::make_shared<const scoring::ScoringMatrix>(
        *scoring::load_matrix(o.out / scoring::kMatrixFile));
    return std::shared_ptr<protocol::ProviderCore>(
        *protocol::ProviderCore::create(std::move(config), store.get()));
  };
  tls.start(make_core(manifest.version_id), /*keep_versions=*/2);
  auto& srv = tls.server;
  auto sc = *SearchClient::open(o.out, transport());
  SearchOptions opts;
  opts.candidates = 20;
  ASSERT_TRUE(sc->search(Query::text("document 5"), opts).ok());
  const std::string v2(64, 'b'), v3(64, 'c');
  srv->replace_core(make_core(v2));
  const auto info = *transport()->server_info();
  EXPECT_EQ(info.artifact_version(), v2);
  ASSERT_EQ(info.retained_versions_size(), 1);
  EXPECT_EQ(info.retained_versions(0), manifest.version_id);
  EXPECT_TRUE(sc->search(Query::text("document 5"), opts).ok());
  auto po = access_private_search();
  po.clusters = 2;
  EXPECT_TRUE(sc->search(Query::text("document 5"), po).ok());
  EXPECT_TRUE(SearchClient::open(o.out, transport()).ok());  // a client arriving late
  srv->replace_core(make_core(v3));
  const auto stale = sc->search(Query::text("document 5"), opts);
  ASSERT_FALSE(stale.ok());
  EXPECT_NE(stale.status().message().find("ARTIFACT_STALE"), std::string::npos)
      << stale.status().to_string();
  EXPECT_NE(stale.status().message().find(v3), std::string::npos);  // names the newest
  const auto stale_private = sc->search(Query::text("document 5"), po);
  ASSERT_FALSE(stale_private.ok());
  EXPECT_NE(stale_private.status().message().find("ARTIFACT_STALE"), std::string::npos);
  EXPECT_EQ(SearchClient::open(o.out, transport()).status().code(),
            StatusCode::kFailedPrecondition);
}

TEST_F(PrivateSearchTest, SignedIndexOpensAndOlderOrForeignVersionsAreRefused) {
  // The operator signs version 1 (a copy of the index) and then version 2 with 1 as its
  // parent; a client pinning the key opens 2, then refuses 1 (rollback) and an index signed by
  // someone else, before any request reaches the provider.
  auto key = *index::Ed25519SigningKey::generate();
  ASSERT_TRUE(key.public_key().save(c.dir / "op.pub").ok());
  const auto old_dir = c.dir / "index-v1";
  std::filesystem::copy(o.out, old_dir, std::filesystem::copy_options::recursive);
  auto v1 = *index::load_manifest(old_dir);
  v1.sequence = 1;
  ASSERT_TRUE(index::write_manifest(old_dir, v1).ok());
  ASSERT_TRUE(index::write_manifest_signature(old_dir, v1, key).ok());
  auto v2 = manifest;
  v2.sequence = 2;
  v2.parent_version = v1.version_id;
  ASSERT_TRUE(index::write_manifest(o.out, v2).ok());
  ASSERT_TRUE(index::write_manifest_signature(o.out, v2, key).ok());
  start(v2.version_id);
  const IndexTrust trust{c.dir / "op.pub", c.dir / "seen.json"};
  auto sc = SearchClient::open(o.out, transport(), trust);
  ASSERT_TRUE(sc.ok()) << sc.status().to_string();
  auto po = access_private_search();
  po.clusters = 2;
  EXPECT_TRUE((*sc)->search(Query::text("document 5"), po).ok());
  const auto rolled_back = SearchClient::open(old_dir, transport(), trust);
  EXPECT_EQ(rolled_back.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(rolled_back.status().message().find("rollback"), std::string::npos);
  // Signed by another key: refused even with a fresh memory.
  auto other = *index::Ed25519SigningKey::generate();
  ASSERT_TRUE(index::write_manifest_signature(o.out, v2, other).ok());
  EXPECT_EQ(
      SearchClient::open(o.out, transport(), IndexTrust{c.dir / "op.pub", c.dir / "fresh.json"})
          .status()
          .code(),
      StatusCode::kUnauthenticated);
  // Unsigned: refused when a key is pinned, accepted when none is.
  std::filesystem::remove(o.out / index::kManifestSignatureFile);
  EXPECT_EQ(SearchClient::open(o.out, transport(), trust).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(SearchClient::open(o.out, transport()).ok());
}

}  // namespace
}  // namespace privsearch::client
