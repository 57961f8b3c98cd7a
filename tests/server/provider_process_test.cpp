// The provider as its own process: build a tiny index, start privsearch-provider with a
// self-signed certificate on 127.0.0.1 (port 0), pin its fingerprint, upload keys, rerank under
// the real rerank-n8192 parameters, compare with the plaintext scores of the exact store, then
// stop it with SIGTERM and expect a clean exit.
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ckks/param_sets.h"
#include "client/payload_fetcher.h"
#include "client/provider_client.h"
#include "client/rerank_session.h"
#include "core/bytes.h"
#include "harness/random_vectors.h"
#include "harness/spawned_provider.h"
#include "index/build.h"
#include "index/exact_store.h"
#include "testing/test_util.h"
#include "testing/tiny_collection.h"

namespace privsearch {
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
  const auto provider = spawn(o.out, c.dir, {"--pir-test-params"});
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
