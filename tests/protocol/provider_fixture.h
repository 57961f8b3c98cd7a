// Shared fixture for the provider tests: a small exact store on disk, a client rerank session
// (the same request builder the network client uses), and a check of decrypted scores against
// plaintext.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "client/rerank_session.h"
#include "core/bytes.h"
#include "protocol/provider_core.h"
#include "testing/test_util.h"

namespace privsearch::protocol::testing_support {

namespace fs = std::filesystem;
constexpr std::size_t kDocs = 40;
constexpr std::size_t kDim = 8;
constexpr std::size_t kK = 6;

class ProviderCoreTest : public ::testing::Test {
 protected:
  ProviderCoreTest() : ProviderCoreTest(*ckks::Params::create(ckks::insecure_test_literal(64))) {}
  // The same fixture under other params (the packed kernel's tests pass its preset at n = 64).
  explicit ProviderCoreTest(const ckks::Params& p)
      : params(p),
        prng(::privsearch::testing::test_prng(1701)),
        session(
            *client::RerankSession::create(params, kDim, ::privsearch::testing::test_prng(1702))),
        dir(fs::temp_directory_path() / ("privsearch-provider-" + std::to_string(::getpid()))) {
    fs::create_directories(dir);
    docs.rows = kDocs;
    docs.cols = kDim;
    for (std::size_t i = 0; i < kDocs * kDim; ++i) {
      docs.data.push_back(static_cast<float>(::privsearch::testing::uniform_pm1(prng) * 0.3));
    }
    EXPECT_TRUE(index::ExactStore::write(dir / "exact.bin", docs).ok());
    store = std::make_unique<index::ExactStore>(*index::ExactStore::open(dir / "exact.bin"));
  }
  ~ProviderCoreTest() override { fs::remove_all(dir); }

  std::unique_ptr<ProviderCore> make_core(ProviderLimits limits = {}, int flood_bits = 0,
                                          std::shared_ptr<ProviderState> state = nullptr) {
    ProviderConfig c(params);
    c.params_name = params.name();
    c.artifact_version = "artifact-v1";
    c.limits = limits;
    c.flood_security_bits = flood_bits;
    return *ProviderCore::create(std::move(c), store.get(), std::move(state));
  }

  // A fresh key set for K = kK (a new key epoch of the session).
  v1::UploadKeysRequest upload_request(bool with_public_key = false) {
    return *session.make_key_upload(kK, with_public_key);
  }

  std::string upload(ProviderCore& core, bool with_public_key = false, const Caller& caller = {}) {
    const auto resp = core.upload_keys(upload_request(with_public_key), caller);
    EXPECT_EQ(resp.result_case(), v1::UploadKeysResponse::kKeyId) << resp.error().message();
    return resp.key_id();
  }

  // A request for a fresh random unit query (kept in `z`) naming `key_id`, whatever it is: the
  // provider tests send unknown and mismatched key ids on purpose.
  v1::RerankRequest request(const std::string& key_id, const std::vector<std::uint64_t>& ids) {
    z.assign(kDim, 0.0);
    double norm = 0;
    for (auto& v : z) {
      v = ::privsearch::testing::uniform_pm1(prng);
      norm += v * v;
    }
    for (auto& v : z) v /= std::sqrt(norm);
    session.set_key_id(ids.size(), key_id);
    return session.build_request({z, ids, "artifact-v1"})->request;
  }

  // Decrypts a successful response and compares with the plaintext scores of `ids`.
  void expect_scores(const v1::RerankResponse& resp, const std::vector<std::uint64_t>& ids) {
    ASSERT_EQ(resp.result_case(), v1::RerankResponse::kPayload) << resp.error().message();
    client::PendingRerank pending;
    pending.layout =
        *rerank::make_layout(params, rerank::kernel_for_params(params), kDim, ids.size());
    const auto scores = session.decode_response(pending, resp);
    ASSERT_TRUE(scores.ok()) << scores.status().message();
    ASSERT_EQ(scores->size(), ids.size());
    for (std::size_t c = 0; c < ids.size(); ++c) {
      double want = 0;
      for (std::size_t j = 0; j < kDim; ++j) want += z[j] * docs.row(ids[c])[j];
      EXPECT_NEAR((*scores)[c], want, 1e-3) << "candidate " << c;
    }
  }

  ckks::Params params;
  Prng prng;
  client::RerankSession session;
  fs::path dir;
  index::Matrix docs;
  std::unique_ptr<index::ExactStore> store;
  std::vector<double> z;
  const std::vector<std::uint64_t> ids_{3, 17, 0, 39, 22, 8};
};

}  // namespace privsearch::protocol::testing_support
