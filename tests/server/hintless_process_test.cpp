// The hintless PIR backend (pir/hintless) through the real provider process at its defaults: no
// setup, the top documents of one search and the probed IVF lists each in one PirQuery batch,
// records equal to the stored ones, every malformed request a typed refusal, the database
// rebuilt on SIGHUP.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "client/payload_fetcher.h"
#include "client/provider_client.h"
#include "client/search_client.h"
#include "harness/spawned_provider.h"
#include "index/artifacts/append.h"
#include "index/artifacts/atomic_file.h"
#include "index/artifacts/client_files.h"
#include "index/artifacts/manifest_signature.h"
#include "index/candidates/ivf.h"
#include "server/process_test_util.h"
#include "testing/provider_wait.h"
#include "testing/test_util.h"
#include "testing/tiny_collection.h"

namespace privsearch {
namespace {

namespace fs = std::filesystem;

using testing::count_in;
using testing::ivf_index;
using testing::kAnsweredPirQuery;

std::unique_ptr<tools::SpawnedProvider> spawn_hintless(const testing::Collection& c,
                                                       const fs::path& index,
                                                       std::vector<std::string> args) {
  return testing::spawn_logged(c, index, {"--threads", "2", "--pir-test-params"}, args);
}

client::FetchOptions fetch_options() {
  client::FetchOptions fo;
  fo.allow_insecure = true;
  return fo;
}

TEST(HintlessProcess, PayloadsComeBackInOneBatchWithoutSetupAndMalformedQueriesAreTyped) {
  testing::Collection c("hintless-payloads");
  const auto o = ivf_index(c);
  const auto provider = spawn_hintless(c, o.out, {});
  ASSERT_NE(provider, nullptr);
  auto cl = *client::ProviderClient::connect(provider->connect_options());
  const auto info = *cl->pir_info();
  ASSERT_FALSE(info.has_error());
  EXPECT_EQ(info.backend(), v1::PIR_BACKEND_HINTLESS);
  EXPECT_EQ(info.max_batch(), 32u);
  auto fetcher = *client::PayloadFetcher::create(*cl, info.artifact_version(), fetch_options());
  EXPECT_TRUE(fetcher->hintless());
  const std::vector<std::uint64_t> docs = {7, 0, 399};
  client::FetchTiming t;
  const auto texts = fetcher->fetch_many(docs, &t);
  ASSERT_TRUE(texts.ok()) << texts.status().to_string();
  for (std::size_t i = 0; i < docs.size(); ++i) {
    EXPECT_NE((*texts)[i].find("document " + std::to_string(docs[i])), std::string::npos)
        << (*texts)[i];
  }
  EXPECT_EQ(fetcher->setups(), 0u);
  EXPECT_GT(t.query_bytes, 0u);
  EXPECT_EQ(count_in(c.dir / "provider.log", kAnsweredPirQuery), 1u);  // one batch
  EXPECT_EQ(count_in(c.dir / "provider.log", "\"rpc\":\"PirSetup\""), 0u);

  // Hostile requests: each refused by name, and the provider keeps serving.
  auto query_error = [&](const v1::PirQueryRequest& r) {
    auto resp = cl->pir_query(r);
    EXPECT_TRUE(resp.ok());
    return resp.ok() ? resp->error().code() : v1::ERROR_CODE_UNSPECIFIED;
  };
  v1::PirQueryRequest bad;
  bad.set_artifact_version(info.artifact_version());
  bad.add_queries("not a query");
  EXPECT_EQ(query_error(bad), v1::MALFORMED_REQUEST);
  bad.clear_queries();
  EXPECT_EQ(query_error(bad), v1::MALFORMED_REQUEST);  // an empty batch
  bad.set_query("a ZipPIR-style query");
  bad.add_queries("x");
  EXPECT_EQ(query_error(bad), v1::MALFORMED_REQUEST);
  bad.clear_query();
  for (int i = 0; i < 40; ++i) bad.add_queries("x");
  EXPECT_EQ(query_error(bad), v1::PIR_LIMIT);  // 41 > max_batch, refused before decoding
  bad.clear_queries();
  bad.add_queries("x");
  bad.set_artifact_version("stale");
  EXPECT_EQ(query_error(bad), v1::PIR_VERSION_MISMATCH);
  v1::PirSetupRequest setup;
  setup.set_artifact_version(info.artifact_version());
  const auto refused_setup = *cl->pir_setup(setup);
  EXPECT_EQ(refused_setup.error().code(), v1::MALFORMED_REQUEST);
  EXPECT_NE(refused_setup.error().message().find("hintless"), std::string::npos);

  // The provider kept serving through all of it (a restart with nothing per client is
  // ProviderIdentityTest.TokensBudgetsAndRestartsHold, at this default backend).
  const auto text = fetcher->fetch(123);
  ASSERT_TRUE(text.ok()) << text.status().to_string();
  EXPECT_NE(text->find("document 123"), std::string::npos);
  const int status = provider->stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(HintlessProcess, PrivateListsInOneBatchGiveThePlainCandidatesAndFollowAnUpdate) {
  testing::Collection c("hintless-lists");
  const auto ix = testing::signed_ivf_index(c);
  const auto& o = ix.build;
  const auto& thin = ix.thin;
  const auto provider = spawn_hintless(c, o.out, {"--pir-lists"});
  ASSERT_NE(provider, nullptr);
  const auto connect = [&] {
    return *client::ProviderClient::connect(provider->connect_options());
  };
  const auto private_options = testing::ivf_open_options(true);
  auto plain = *client::SearchClient::open(thin, connect(), testing::ivf_open_options(false));
  auto hidden = *client::SearchClient::open(thin, connect(), private_options);
  client::SearchOptions so;
  so.candidates = 20;
  so.nprobe = 3;
  std::vector<client::SearchResult> wanted;
  for (const std::size_t row : {17u, 250u}) {
    auto want =
        plain->search(client::Query::vector(std::span(c.vectors.row(row), c.vectors.cols)), so);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    wanted.push_back(std::move(*want));
  }
  // Counted after the plain client's searches (whose calls a loaded machine may retry).
  const auto fetch_lists_before = count_in(c.dir / "provider.log", "\"rpc\":\"FetchLists\"");
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    const std::size_t row = i == 0 ? 17u : 250u;
    const auto got =
        hidden->search(client::Query::vector(std::span(c.vectors.row(row), c.vectors.cols)), so);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    EXPECT_EQ(got->candidates, wanted[i].candidates) << row;
    EXPECT_EQ(got->probed_lists, wanted[i].probed_lists) << row;
  }
  // The private searches made no FetchLists call, and each sent its lists in one PirQuery.
  EXPECT_EQ(count_in(c.dir / "provider.log", "\"rpc\":\"FetchLists\""), fetch_lists_before);
  EXPECT_LE(count_in(c.dir / "provider.log", kAnsweredPirQuery), 2u);

  // An update and SIGHUP: both PIR databases are rebuilt under the new version.
  const auto in = testing::appended_documents(400, 20);
  const auto update = index::append_to_index(o.out, in, &ix.key);
  ASSERT_TRUE(update.ok()) << update.status().to_string();
  ASSERT_TRUE(provider->signal(SIGHUP));
  auto cl = connect();
  ASSERT_TRUE(testing::wait_for_version(*cl, update->manifest.version_id));
  auto fetcher = *client::PayloadFetcher::create(*cl, update->manifest.version_id, fetch_options());
  const auto added = fetcher->fetch(405);
  ASSERT_TRUE(added.ok()) << added.status().to_string();
  EXPECT_NE(added->find("added text"), std::string::npos) << *added;
  ix.refresh_thin();
  auto fresh = *client::SearchClient::open(thin, connect(), private_options);
  so.nprobe = 8;
  const std::uint64_t first_new = cl->server_info()->documents() - 20;
  const auto r =
      fresh->search(client::Query::vector(std::span(in.vectors.row(3), c.vectors.cols)), so);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_NE(std::find(r->candidates.begin(), r->candidates.end(), first_new + 3),
            r->candidates.end());
  const int status = provider->stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(count_in(c.dir / "provider.log", "reload: PIR hintless YPIR+SP"), 1u);
  EXPECT_EQ(count_in(c.dir / "provider.log", "reload: PIR of the IVF lists hintless YPIR+SP"), 1u);
}

}  // namespace
}  // namespace privsearch
