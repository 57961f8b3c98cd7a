// Shared fixture for the provider tests: a small exact store on disk, a client secret key, and
// helpers that build protobuf requests and check decrypted scores against plaintext.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ckks/client/keygen.h"
#include "ckks/compact.h"
#include "ckks/galois_keys.h"
#include "ckks/serialization.h"
#include "protocol/provider_core.h"
#include "rerank/client/scores.h"
#include "rerank/messages.h"
#include "testing/test_util.h"

namespace privsearch::protocol::testing_support {

namespace fs = std::filesystem;
constexpr std::size_t kDocs = 40;
constexpr std::size_t kDim = 8;
constexpr std::size_t kK = 6;

inline std::string bytes_of(std::span<const std::uint8_t> b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

class ProviderCoreTest : public ::testing::Test {
 protected:
  ProviderCoreTest()
      : params(*ckks::Params::create(ckks::insecure_test_literal(64))),
        prng(::privsearch::testing::test_prng(1701)),
        keygen(params),
        sk(keygen.create_secret_key(prng)),
        dir(fs::temp_directory_path() / ("privsearch-provider-" + std::to_string(::getpid()))) {
    fs::create_directories(dir);
    docs.rows = kDocs;
    docs.cols = kDim;
    for (std::size_t i = 0; i < kDocs * kDim; ++i) {
      docs.data.push_back(static_cast<float>(::privsearch::testing::uniform_pm1(prng) * 0.3));
    }
    EXPECT_TRUE(index::ExactStore::write(dir / "exact.bin", docs).ok());
    store = std::make_unique<index::ExactStore>(*index::ExactStore::open(dir / "exact.bin"));
    layout = *rerank::make_layout(params, rerank::Kernel::kFast, kDim, kK);
  }
  ~ProviderCoreTest() override { fs::remove_all(dir); }

  std::unique_ptr<ProviderCore> make_core(ProviderLimits limits = {}, int flood_bits = 0) {
    ProviderConfig c(params);
    c.params_name = "insecure-test-64";
    c.artifact_version = "artifact-v1";
    c.limits = limits;
    c.flood_security_bits = flood_bits;
    return *ProviderCore::create(std::move(c), store.get());
  }

  v1::UploadKeysRequest upload_request(bool with_public_key = false) {
    const auto keys = *rerank::make_rotation_keys(layout, keygen, sk, prng);
    v1::UploadKeysRequest req;
    req.set_params_id(bytes_of(params.id()));
    req.set_galois_keys(bytes_of(ckks::serialize_galois_keys(params, keys)));
    if (with_public_key) {
      req.set_public_key(
          bytes_of(ckks::serialize_public_key(params, *keygen.create_public_key(sk, prng))));
    }
    return req;
  }

  std::string upload(ProviderCore& core, bool with_public_key = false) {
    const auto resp = core.upload_keys(upload_request(with_public_key));
    EXPECT_EQ(resp.result_case(), v1::UploadKeysResponse::kKeyId) << resp.error().message();
    return resp.key_id();
  }

  v1::RerankRequest request(const std::string& key_id, const std::vector<std::uint64_t>& ids) {
    z.assign(kDim, 0.0);
    double norm = 0;
    for (auto& v : z) {
      v = ::privsearch::testing::uniform_pm1(prng);
      norm += v * v;
    }
    for (auto& v : z) v /= std::sqrt(norm);
    const auto l = *rerank::make_layout(params, rerank::Kernel::kFast, kDim, ids.size());
    const auto ct = *rerank::encrypt_query(l, params, sk, z, prng);
    rerank::RerankRequest rr{params.id(), rerank::Kernel::kFast, kDim, l.period, ids.size(),
                             *ckks::serialize_ciphertext(params, ct, ckks::CiphertextForm::kSeeded)};
    v1::RerankRequest req;
    req.set_key_id(key_id);
    req.set_artifact_version("artifact-v1");
    for (const auto id : ids) req.add_candidate_ids(id);
    req.set_query(bytes_of(rerank::serialize_request(rr)));
    return req;
  }

  // Decrypts a successful response and compares with the plaintext scores of `ids`.
  void expect_scores(const v1::RerankResponse& resp, const std::vector<std::uint64_t>& ids) {
    ASSERT_EQ(resp.result_case(), v1::RerankResponse::kPayload) << resp.error().message();
    const auto& p = resp.payload();
    const auto out = *rerank::deserialize_response(
        {reinterpret_cast<const std::uint8_t*>(p.data()), p.size()});
    const auto l = *rerank::make_layout(params, rerank::Kernel::kFast, kDim, ids.size());
    ASSERT_TRUE(rerank::check_response(params, l, out).ok());
    std::vector<ckks::CompactCiphertext> cts;
    for (const auto& b : out.outputs) cts.push_back(*ckks::deserialize_compact(params, b));
    const auto scores = *rerank::decrypt_compact_scores(l, params, sk, cts);
    ASSERT_EQ(scores.size(), ids.size());
    for (std::size_t c = 0; c < ids.size(); ++c) {
      double want = 0;
      for (std::size_t j = 0; j < kDim; ++j) want += z[j] * docs.row(ids[c])[j];
      EXPECT_NEAR(scores[c], want, 1e-3) << "candidate " << c;
    }
  }

  ckks::Params params;
  Prng prng;
  ckks::KeyGenerator keygen;
  ckks::SecretKey sk;
  fs::path dir;
  index::Matrix docs;
  std::unique_ptr<index::ExactStore> store;
  rerank::KernelLayout layout;
  std::vector<double> z;
  const std::vector<std::uint64_t> ids_{3, 17, 0, 39, 22, 8};
};

}  // namespace privsearch::protocol::testing_support
