// The provider as its own process: build a tiny index, start privsearch-provider with a
// self-signed certificate on 127.0.0.1 (port 0), pin its fingerprint, upload keys, rerank under
// the real rerank-n8192 parameters, compare with the plaintext scores of the exact store, then
// stop it with SIGTERM and expect a clean exit.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>
#include <vector>

#include "ckks/client/keygen.h"
#include "ckks/compact.h"
#include "ckks/param_sets.h"
#include "ckks/serialization.h"
#include "client/payload_fetcher.h"
#include "client/provider_client.h"
#include "index/build.h"
#include "index/exact_store.h"
#include "rerank/client/scores.h"
#include "rerank/messages.h"
#include "testing/tiny_collection.h"

namespace privsearch {
namespace {

std::string bytes_of(std::span<const std::uint8_t> b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

std::string read_first_line(const std::filesystem::path& f) {
  std::ifstream in(f);
  std::string line;
  std::getline(in, line);
  return line;
}

// The tiny collection's index as both tests build it (external vectors, d' = 16, M = 4).
index::BuildOptions tiny_index_options(const testing::Collection& c, std::size_t record_bytes) {
  index::BuildOptions o;
  o.collection = c.dir;
  o.doc_vectors = c.dir / "vectors.npy";
  o.out = c.dir / "index";
  o.dim = 16;
  o.pq_m = 4;
  o.record_bytes = record_bytes;
  return o;
}

// Forks and execs privsearch-provider on `index_dir` (self-signed TLS, port 0, two threads),
// writing its port and fingerprint files into `dir`; `extra` arguments are appended.
pid_t fork_provider(const std::filesystem::path& index_dir, const std::filesystem::path& dir,
                    const std::vector<std::string>& extra) {
  std::vector<std::string> args = {PRIVSEARCH_PROVIDER_BIN, "--index", index_dir.string(),
                                   "--listen", "127.0.0.1:0", "--self-signed", "--port-file",
                                   (dir / "port").string(), "--fingerprint-file",
                                   (dir / "fingerprint").string(), "--threads", "2"};
  args.insert(args.end(), extra.begin(), extra.end());
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

TEST(ProviderProcess, ServesTheIndexOverTlsAndStopsOnSigterm) {
  testing::Collection c("provider-process");
  const auto o = tiny_index_options(c, 256);
  const auto manifest = *index::build_index(o, nullptr);

  const auto port_file = c.dir / "port";
  const auto fp_file = c.dir / "fingerprint";
  const pid_t pid = fork_provider(o.out, c.dir, {});
  ASSERT_GE(pid, 0);
  // Wait until the provider says where it listens (it writes the files atomically).
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!std::filesystem::exists(port_file) && std::chrono::steady_clock::now() < until) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, WNOHANG), 0) << "provider exited early";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(std::filesystem::exists(port_file));

  client::ConnectOptions co;
  co.port = static_cast<std::uint16_t>(std::stoi(read_first_line(port_file)));
  co.pinned_fingerprint = read_first_line(fp_file);
  auto cl = *client::ProviderClient::connect(co);
  const auto info = *cl->server_info();
  EXPECT_EQ(info.artifact_version(), manifest.version_id);
  EXPECT_EQ(info.attestation().process_id(), static_cast<std::uint32_t>(pid));
  EXPECT_FALSE(info.attestation().secret_key_code_linked());
  EXPECT_TRUE(info.attestation().store_read_only());
  EXPECT_EQ(info.documents(), 400u);
  EXPECT_EQ(info.dim(), 16u);

  const auto params = *ckks::Params::create(*ckks::preset_literal(info.params_name()));
  EXPECT_EQ(info.params_id(), bytes_of(params.id()));
  Prng prng = testing::test_prng(4242);
  const ckks::KeyGenerator keygen(params);
  const auto sk = keygen.create_secret_key(prng);
  const std::vector<std::uint64_t> ids{5, 399, 0, 123, 77, 250, 31, 8, 190, 64};
  const auto layout = *rerank::make_layout(params, rerank::Kernel::kFast, 16, ids.size());
  v1::UploadKeysRequest up;
  up.set_params_id(info.params_id());
  up.set_galois_keys(bytes_of(ckks::serialize_galois_keys(
      params, *rerank::make_rotation_keys(layout, keygen, sk, prng))));
  const auto key_id = cl->upload_keys(up)->key_id();
  ASSERT_EQ(key_id.size(), 32u);

  std::vector<double> z(16);
  double norm = 0;
  for (auto& v : z) {
    v = testing::uniform_pm1(prng);
    norm += v * v;
  }
  for (auto& v : z) v /= std::sqrt(norm);
  const auto ct = *rerank::encrypt_query(layout, params, sk, z, prng);
  rerank::RerankRequest rr{params.id(), rerank::Kernel::kFast, 16, layout.period, ids.size(),
                           *ckks::serialize_ciphertext(params, ct, ckks::CiphertextForm::kSeeded)};
  v1::RerankRequest req;
  req.set_key_id(key_id);
  req.set_artifact_version(info.artifact_version());
  for (const auto id : ids) req.add_candidate_ids(id);
  req.set_query(bytes_of(rerank::serialize_request(rr)));
  const auto resp = *cl->rerank(req);
  ASSERT_TRUE(resp.has_payload()) << resp.error().message();
  const auto& p = resp.payload();
  const auto out = *rerank::deserialize_response(
      {reinterpret_cast<const std::uint8_t*>(p.data()), p.size()});
  ASSERT_TRUE(rerank::check_response(params, layout, out).ok());
  std::vector<ckks::CompactCiphertext> cts;
  for (const auto& b : out.outputs) cts.push_back(*ckks::deserialize_compact(params, b));
  const auto scores = *rerank::decrypt_compact_scores(layout, params, sk, cts);
  const auto store = *index::ExactStore::open(o.out / "exact.store");
  for (std::size_t i = 0; i < ids.size(); ++i) {
    double want = 0;
    for (std::size_t j = 0; j < 16; ++j) want += z[j] * store.row(ids[i])[j];
    EXPECT_NEAR(scores[i], want, 1e-4 * std::max(1.0, std::abs(want))) << "candidate " << i;
  }

  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
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
  const auto port_file = c.dir / "port";
  const auto fp_file = c.dir / "fingerprint";
  const pid_t pid = fork_provider(o.out, c.dir, {"--pir-test-params", "--quiet"});
  ASSERT_GE(pid, 0);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (read_first_line(fp_file).empty() || read_first_line(port_file).empty()) {
    ASSERT_LT(std::chrono::steady_clock::now(), until) << "provider did not start";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  client::ConnectOptions co;
  co.port = static_cast<std::uint16_t>(std::stoi(read_first_line(port_file)));
  co.pinned_fingerprint = read_first_line(fp_file);
  auto transport = *client::ProviderClient::connect(co);
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
  ::kill(pid, SIGHUP);
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
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace privsearch
