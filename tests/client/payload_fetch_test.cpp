// Private payload fetch end to end: an in-process provider over TLS with the PirService on the
// index's payload store (insecure small PIR parameters for speed), the client's PayloadFetcher.
// Fetched payloads equal the stored documents for random choices; a rebuilt database (new
// artifact version) invalidates old hints and a new fetcher recovers; malformed and unknown
// requests get typed errors while the provider keeps serving.
#include <gtest/gtest.h>

#include "ckks/param_sets.h"
#include "client/payload_fetcher.h"
#include "core/bytes.h"
#include "index/artifacts/exact_store.h"
#include "index/artifacts/payload_store.h"
#include "index/build.h"
#include "net/tls.h"
#include "pir/zippir/zippir_common.h"
#include "protocol/pir_service.h"
#include "protocol/provider_core.h"
#include "server/provider_server.h"
#include "testing/lexical_index_test.h"

namespace privsearch::client {
namespace {

class PayloadFetchTest : public testing::LexicalIndexTest {
 protected:
  PayloadFetchTest() : LexicalIndexTest("payload-fetch", 128) {}
  void SetUp() override {
    build();
    payloads =
        std::make_unique<index::PayloadStore>(*index::PayloadStore::open(o.out / "payloads.bin"));
  }
  void start(const std::string& version) {
    tls.stop();
    protocol::PirConfig pc;
    pc.lwe_params = "insecure-test-n64-binary";
    pc.paillier_bits = 512;
    pc.allow_insecure = true;
    pc.ready_per_client = 2;
    pir = *protocol::PirService::create(*payloads, version, pc);
    serve(config_for(version), [&](server::ServeOptions& so) { so.pir = pir.get(); });
  }
  FetchOptions options() {
    FetchOptions fo;
    fo.allow_insecure = true;
    fo.wait_ms = 60000;
    return fo;
  }

  std::unique_ptr<index::PayloadStore> payloads;
  std::unique_ptr<protocol::PirService> pir;  // stopped with the server in TearDown
};

TEST_F(PayloadFetchTest, FetchedPayloadsEqualStoredDocuments) {
  start(manifest.version_id);
  auto t = transport();
  auto fetcher = PayloadFetcher::create(*t, manifest.version_id, options());
  ASSERT_TRUE(fetcher.ok()) << fetcher.status().to_string();
  EXPECT_LT((*fetcher)->setup_bytes(), 200u);  // 64-byte N + seed + header at test size
  Prng prng = Prng::from_seed(Seed{1});
  for (int i = 0; i < 5; ++i) {
    const std::uint64_t doc = prng.uniform_below(payloads->records());
    FetchTiming timing;
    auto text = (*fetcher)->fetch(doc, &timing);
    ASSERT_TRUE(text.ok()) << text.status().to_string();
    EXPECT_EQ(*text, *payloads->text(doc)) << doc;
    EXPECT_GT(timing.query_bytes, 0u);
    EXPECT_GT(timing.response_bytes, 0u);
  }
}

// The PIR database's shape is bound to the signed manifest: the shape the manifest implies is the
// provider's, and a provider serving another shape (here: the client expects other records or
// record sizes) is refused at setup, before any query.
TEST_F(PayloadFetchTest, PirShapeIsBoundToTheSignedManifest) {
  start(manifest.version_id);
  const auto shape = index::payload_shape(manifest);
  ASSERT_TRUE(shape.ok()) << shape.status().to_string();
  EXPECT_EQ(shape->records, payloads->records());
  EXPECT_EQ(shape->record_bytes, payloads->record_bytes());
  auto t = transport();
  auto fo = options();
  fo.expected_shape = *shape;
  auto fetcher = PayloadFetcher::create(*t, manifest.version_id, fo);
  ASSERT_TRUE(fetcher.ok()) << fetcher.status().to_string();
  EXPECT_EQ(*(*fetcher)->fetch(3), *payloads->text(3));
  for (const auto& other : {index::PayloadShape{shape->records + 1, shape->record_bytes},
                            index::PayloadShape{shape->records, shape->record_bytes * 2}}) {
    fo.expected_shape = other;
    const auto refused = PayloadFetcher::create(*t, manifest.version_id, fo);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(refused.status().message().find("another shape"), std::string::npos);
  }
  // A manifest whose payload sizes do not divide into its documents is not trusted either.
  auto odd = manifest;
  for (auto& e : odd.artifacts) {
    if (e.name == "payloads") e.bytes += 1;
  }
  EXPECT_EQ(index::payload_shape(odd).status().code(), StatusCode::kDataLoss);
  auto none = manifest;
  std::erase_if(none.artifacts, [](const auto& e) { return e.name == "payloads"; });
  EXPECT_EQ(index::payload_shape(none).status().code(), StatusCode::kNotFound);
  // A payload record below its 4-byte length decodes to a typed error, never a wrapped size.
  const std::uint8_t tiny[3] = {1, 0, 0};
  EXPECT_EQ(index::PayloadStore::decode_record(tiny, 3).status().code(), StatusCode::kDataLoss);
}

TEST_F(PayloadFetchTest, RebuiltDatabaseInvalidatesHintsAndANewFetcherRecovers) {
  start(manifest.version_id);
  auto t = transport();
  auto fetcher = *PayloadFetcher::create(*t, manifest.version_id, options());
  ASSERT_TRUE(fetcher->fetch(3).ok());
  start("rebuilt-version");  // a new database: every hint of the old one is gone
  auto t2 = transport();
  auto stale = fetcher->fetch(4);
  EXPECT_FALSE(stale.ok());
  auto wrong = PayloadFetcher::create(*t2, manifest.version_id, options());
  EXPECT_EQ(wrong.status().code(), StatusCode::kFailedPrecondition);
  auto fresh = PayloadFetcher::create(*t2, "rebuilt-version", options());
  ASSERT_TRUE(fresh.ok());
  auto text = (*fresh)->fetch(4);
  ASSERT_TRUE(text.ok()) << text.status().to_string();
  EXPECT_EQ(*text, *payloads->text(4));
}

// The paper's database-update advantage: the provider rebuilds the PIR database in place and
// recomputes every registered client's hints from its stored setup, without the client.
TEST_F(PayloadFetchTest, InPlaceRebuildRecomputesHintsWithoutTheClient) {
  start(manifest.version_id);
  auto t = transport();
  auto fetcher = *PayloadFetcher::create(*t, manifest.version_id, options());
  ASSERT_TRUE(fetcher->fetch(2).ok());
  // New contents, same shape: rewrite the payload store with every text changed.
  std::vector<index::Document> docs;
  for (std::size_t i = 0; i < payloads->records(); ++i) {
    index::Document d;
    d.id = "d" + std::to_string(i);
    d.title = "updated " + std::to_string(i);
    d.text = "new body of document " + std::to_string(i);
    docs.push_back(d);
  }
  const auto updated_file = c.dir / "updated.bin";
  ASSERT_TRUE(index::PayloadStore::write(updated_file, docs, payloads->record_bytes()).ok());
  auto updated = *index::PayloadStore::open(updated_file);
  ASSERT_TRUE(pir->rebuild(updated, "v2").ok());
  ASSERT_TRUE(pir->wait_until_ready(60000));  // hints recomputed with no client message
  fetcher->set_artifact_version("v2");
  auto text = fetcher->fetch(9);
  ASSERT_TRUE(text.ok()) << text.status().to_string();
  EXPECT_EQ(*text, *updated.text(9));
  EXPECT_EQ(fetcher->setups(), 1u);  // no new setup
}

TEST_F(PayloadFetchTest, ErrorPathsKeepTheProviderServing) {
  start(manifest.version_id);
  auto t = transport();
  v1::PirQueryRequest bad;
  bad.set_artifact_version(manifest.version_id);
  bad.set_query("not a query");
  auto r = t->pir_query(bad);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->error().code(), v1::MALFORMED_REQUEST);
  v1::PirStatusRequest unknown;
  unknown.set_artifact_version(manifest.version_id);
  unknown.set_client_id(42);
  EXPECT_EQ(t->pir_status(unknown)->error().code(), v1::UNKNOWN_PIR_CLIENT);
  unknown.set_artifact_version("old");
  EXPECT_EQ(t->pir_status(unknown)->error().code(), v1::PIR_VERSION_MISMATCH);
  v1::PirSetupRequest setup;
  setup.set_artifact_version(manifest.version_id);
  setup.set_setup(std::string(50, 'x'));
  EXPECT_EQ(t->pir_setup(setup)->error().code(), v1::MALFORMED_REQUEST);
  // Messages framed for another ZipPIR version or another database: a version mismatch (told
  // apart by the framing check, not by the server's message text), never "no precomputed
  // query"; a well-framed query from an unknown client stays UNKNOWN_PIR_CLIENT.
  const auto info = *pir::ZipPirPublicInfo::deserialize(byte_view(pir->info().info()), true);
  auto framed = [](const char* magic, std::uint8_t version, std::uint64_t params_id) {
    std::string m(magic, 4);
    m.push_back(static_cast<char>(version));
    for (int i = 0; i < 8; ++i) m.push_back(static_cast<char>(params_id >> (8 * i)));
    return m + std::string(64, '\0');
  };
  const std::uint64_t id = info.params_id();
  bad.set_query(framed("ZPQU", 2, id));
  EXPECT_EQ(t->pir_query(bad)->error().code(), v1::PIR_VERSION_MISMATCH);
  bad.set_query(framed("ZPQU", 1, id + 1));
  EXPECT_EQ(t->pir_query(bad)->error().code(), v1::PIR_VERSION_MISMATCH);
  bad.set_query(framed("ZPQU", 1, id));
  EXPECT_EQ(t->pir_query(bad)->error().code(), v1::MALFORMED_REQUEST);  // body too short
  setup.set_setup(framed("ZPSU", 1, id + 1));
  EXPECT_EQ(t->pir_setup(setup)->error().code(), v1::PIR_VERSION_MISMATCH);
  setup.set_setup(framed("ZPQU", 1, id));  // a query's magic on a setup
  EXPECT_EQ(t->pir_setup(setup)->error().code(), v1::MALFORMED_REQUEST);
  // Still serving.
  auto fetcher = PayloadFetcher::create(*t, manifest.version_id, options());
  ASSERT_TRUE(fetcher.ok());
  auto text = (*fetcher)->fetch(7);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, *payloads->text(7));
}

TEST_F(PayloadFetchTest, ProviderWithoutPirAnswersUnavailable) {
  protocol::ProviderConfig config(*ckks::Params::create(*ckks::preset_literal("rerank-n8192")));
  config.artifact_version = manifest.version_id;
  core = *protocol::ProviderCore::create(std::move(config), store.get());
  tls.start(*core);
  auto t = transport();
  EXPECT_EQ(PayloadFetcher::create(*t, manifest.version_id, options()).status().code(),
            StatusCode::kUnavailable);
}

}  // namespace
}  // namespace privsearch::client
