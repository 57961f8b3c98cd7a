// The provider as its own process: build a tiny index, start privsearch-provider with a
// self-signed certificate on 127.0.0.1 (port 0), pin its fingerprint, upload keys, rerank under
// the default preset's parameters (ckks::kDefaultServicePreset), compare with the plaintext
// scores of the exact store, then stop it with SIGTERM and expect a clean exit.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <thread>
#include <vector>

#include "ckks/param_sets.h"
#include "client/payload_fetcher.h"
#include "client/provider_client.h"
#include "client/rerank_session.h"
#include "client/search_client.h"
#include "core/bytes.h"
#include "harness/random_vectors.h"
#include "harness/spawned_provider.h"
#include "index/artifacts/client_files.h"
#include "index/artifacts/exact_store.h"
#include "index/build.h"
#include "index/candidates/ivf.h"
#include "scoring/build.h"
#include "scoring/client/private_query.h"
#include "testing/test_util.h"
#include "testing/tiny_collection.h"

namespace privsearch {

using client::Stage;
namespace {

using testing::tiny_index_options;

// privsearch-provider (the binary this build made) on `index_dir`: self-signed TLS, port 0,
// two worker threads; `extra` arguments are appended.
std::unique_ptr<tools::SpawnedProvider> spawn(const std::filesystem::path& index_dir,
                                              const std::filesystem::path& dir,
                                              std::vector<std::string> extra) {
  tools::ProviderLaunch launch;
  launch.binary = PRIVSEARCH_PROVIDER_BIN;
  launch.index_dir = index_dir;
  launch.work_dir = dir;
  launch.extra_args = {"--threads", "2"};
  launch.extra_args.insert(launch.extra_args.end(), extra.begin(), extra.end());
  launch.start_timeout = std::chrono::seconds(60);
  auto p = tools::SpawnedProvider::start(launch);
  EXPECT_TRUE(p.ok()) << p.status().to_string();
  return p.ok() ? std::move(p).value() : nullptr;
}

TEST(ProviderProcess, ServesTheIndexOverTlsAndStopsOnSigterm) {
  testing::Collection c("provider-process");
  const auto o = tiny_index_options(c, 256);
  const auto manifest = *index::build_index(o, nullptr);
  const auto provider = spawn(o.out, c.dir, {});
  ASSERT_NE(provider, nullptr);

  auto cl = *client::ProviderClient::connect(provider->connect_options());
  const auto info = *cl->server_info();
  EXPECT_EQ(info.artifact_version(), manifest.version_id);
  EXPECT_EQ(info.attestation().process_id(), static_cast<std::uint32_t>(provider->pid()));
  EXPECT_FALSE(info.attestation().secret_key_code_linked());  // the provider binary: none
  EXPECT_TRUE(info.attestation().store_read_only());
  EXPECT_EQ(info.documents(), 400u);
  EXPECT_EQ(info.dim(), 16u);

  const auto params = *ckks::Params::create(*ckks::preset_literal(info.params_name()));
  EXPECT_EQ(info.params_id(), to_byte_string(params.id()));
  auto session = *client::RerankSession::create(params, 16, testing::test_prng(4242));
  const std::vector<std::uint64_t> ids{5, 399, 0, 123, 77, 250, 31, 8, 190, 64};
  const auto uploaded = *cl->upload_keys(*session.make_key_upload(ids.size(), false));
  ASSERT_EQ(uploaded.key_id().size(), 32u);
  session.set_key_id(ids.size(), uploaded.key_id());

  Prng prng = testing::test_prng(4243);
  const auto z = tools::random_unit_vector(16, prng);
  const auto pending = *session.build_request({z, ids, info.artifact_version()});
  const auto scores = session.decode_response(pending, *cl->rerank(pending.request));
  ASSERT_TRUE(scores.ok()) << scores.status().to_string();
  const auto store = *index::ExactStore::open(o.out / "exact.store");
  for (std::size_t i = 0; i < ids.size(); ++i) {
    double want = 0;
    for (std::size_t j = 0; j < 16; ++j) want += z[j] * store.row(ids[i])[j];
    EXPECT_NEAR((*scores)[i], want, 1e-4 * std::max(1.0, std::abs(want))) << "candidate " << i;
  }

  const int status = provider->stop();
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace privsearch

namespace privsearch {
namespace {

// SIGHUP reload: rebuild the index in place with new document texts (same shape), signal the
// provider, and the registered PIR client fetches the new text under the new version without a
// new setup: its hints were recomputed by the provider alone.
TEST(ProviderProcess, SighupReloadsARebuiltIndexAndRecomputesPirHints) {
  testing::Collection c("provider-reload");
  const auto o = tiny_index_options(c, 128);
  const auto manifest = *index::build_index(o, nullptr);
  const auto provider = spawn(o.out, c.dir, {"--pir-test-params", "--pir-backend", "zippir"});
  ASSERT_NE(provider, nullptr);
  auto transport = *client::ProviderClient::connect(provider->connect_options());
  client::FetchOptions fo;
  fo.allow_insecure = true;
  auto fetcher = *client::PayloadFetcher::create(*transport, manifest.version_id, fo);
  auto before = fetcher->fetch(5);
  ASSERT_TRUE(before.ok()) << before.status().to_string();

  // Rebuild in place with changed texts (same documents, same record size: same PIR shape).
  {
    std::ofstream corpus(c.dir / "corpus.jsonl");
    for (std::size_t i = 0; i < c.vectors.rows; ++i) {
      corpus << R"({"_id": "doc)" << i << R"(", "title": "Revised )" << i
             << R"(", "text": "revised body )" << i << R"("})" << '\n';
    }
  }
  const auto rebuilt = *index::build_index(o, nullptr);
  ASSERT_NE(rebuilt.version_id, manifest.version_id);
  ASSERT_TRUE(provider->signal(SIGHUP));
  fetcher->set_artifact_version(rebuilt.version_id);
  std::string text;
  for (int attempt = 0; attempt < 200; ++attempt) {  // the reload takes a moment
    auto r = fetcher->fetch(5);
    if (r.ok()) {
      text = *r;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_NE(text.find("revised body 5"), std::string::npos) << text;
  EXPECT_EQ(fetcher->setups(), 1u);
  const int status = provider->stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace privsearch

namespace privsearch {
namespace {

// The IVF lists through the provider process: a thin client directory (client-files: manifest,
// projection, ivf.bin) routes, fetches the probed lists over TLS and, probing every list, finds the
// flat client's candidates.
TEST(ProviderProcess, ServesIvfListsToAThinClient) {
  testing::Collection c("provider-ivf");
  auto o = tiny_index_options(c, 128);
  o.ivf = true;
  o.ivf_lists = 8;
  const auto manifest = *index::build_index(o, nullptr);
  const auto thin = c.dir / "thin";
  const auto copied = index::copy_client_files(o.out, thin, {"projection", index::kIvfArtifact});
  ASSERT_TRUE(copied.ok()) << copied.status().to_string();
  EXPECT_FALSE(std::filesystem::exists(thin / "pq.bin"));
  EXPECT_FALSE(std::filesystem::exists(thin / index::kIvfListsFile));
  const auto provider = spawn(o.out, c.dir, {"--no-pir"});
  ASSERT_NE(provider, nullptr);
  EXPECT_EQ(client::ProviderClient::connect(provider->connect_options())
                .value()
                ->server_info()
                ->ivf_lists(),
            8u);
  client::OpenOptions oo;
  oo.list_cache = c.dir / "cache";
  auto lists = *client::SearchClient::open(
      thin, *client::ProviderClient::connect(provider->connect_options()), oo);
  auto flat = *client::SearchClient::open(
      o.out, *client::ProviderClient::connect(provider->connect_options()), oo);
  ASSERT_TRUE(lists->uses_ivf());
  ASSERT_FALSE(flat->uses_ivf());
  client::SearchOptions so;
  so.candidates = 20;
  so.nprobe = 8;
  for (const std::size_t row : {17u, 250u}) {
    const std::span<const float> q(c.vectors.row(row), c.vectors.cols);
    const auto a = lists->search(client::Query::vector(q), so);
    ASSERT_TRUE(a.ok()) << a.status().to_string();
    const auto b = *flat->search(client::Query::vector(q), so);
    EXPECT_EQ(a->candidates, b.candidates);
    EXPECT_EQ(a->hits.front().doc, b.hits.front().doc);
    EXPECT_EQ(a->timing[Stage::kListFetch].items, row == 17 ? 8u : 0u);  // the second from memory
  }
  const int status = provider->stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// The provider process loads the access-private scoring matrix named by the manifest: an
// access-private search through it decodes exact scores, with the same sizes for two queries.
// A provider whose index lacks the database answers PRIVATE_SCORING_UNAVAILABLE.
TEST(ProviderProcess, ServesAccessPrivateScoring) {
  testing::Collection c("provider-private");
  auto o = tiny_index_options(c, 128);
  scoring::ScoringBuildOptions so;
  so.cluster_rows = 64;
  so.cluster_dim = 8;
  o.extra_artifacts = scoring::scoring_artifacts_for_build(so);
  const auto manifest = *index::build_index(o, nullptr);
  const auto provider = spawn(o.out, c.dir, {"--no-pir"});
  ASSERT_NE(provider, nullptr);
  auto sc = *client::SearchClient::open(
      o.out, *client::ProviderClient::connect(provider->connect_options()));
  ASSERT_TRUE(sc->has_private_scoring());
  auto po = client::access_private_search();
  po.clusters = 2;
  const std::span<const float> q17(c.vectors.row(17), c.vectors.cols);
  const auto a = sc->search(client::Query::vector(q17), po);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  const auto b =
      sc->search(client::Query::vector(std::span(c.vectors.row(300), c.vectors.cols)), po);
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(a->timing[Stage::kRpc].bytes_sent, b->timing[Stage::kRpc].bytes_sent);
  EXPECT_EQ(a->timing[Stage::kRpc].bytes_received, b->timing[Stage::kRpc].bytes_received);
  const auto layout = *scoring::load_layout(o.out / scoring::kLayoutFile);
  const auto matrix = *scoring::load_matrix(o.out / scoring::kMatrixFile);
  const auto cluster_of = scoring::cluster_of_documents(layout);
  ASSERT_FALSE(a->hits.empty());
  // The best hit's score, recomputed in the clear from the matrix.
  const auto top = a->hits[0];
  const auto z = sc->project_vector(q17);
  const auto u = scoring::quantize_query(layout, z);
  for (const auto& d : scoring::plaintext_cluster_scores(layout, matrix, u, cluster_of[top.doc])) {
    if (d.doc == top.doc) {
      EXPECT_EQ(static_cast<double>(d.score), top.score);
    }
  }
  const int status = provider->stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  // The same collection without the database: a typed refusal.
  auto plain = tiny_index_options(c, 128);
  plain.out = c.dir / "plain";
  ASSERT_TRUE(index::build_index(plain, nullptr).ok());
  const auto bare = spawn(plain.out, c.dir / "bare", {"--no-pir"});
  ASSERT_NE(bare, nullptr);
  auto cl = *client::ProviderClient::connect(bare->connect_options());
  v1::PrivateScoreRequest req;
  req.set_artifact_version(cl->server_info()->artifact_version());
  req.set_queries(1);
  req.set_ciphertexts(std::string(64 * 8, '\0'));
  EXPECT_EQ(cl->private_score(req)->error().code(), v1::PRIVATE_SCORING_UNAVAILABLE);
}

}  // namespace
}  // namespace privsearch
