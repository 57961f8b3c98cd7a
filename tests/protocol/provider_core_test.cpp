// The provider's request handling: a full rerank through protobuf messages equals the plaintext
// scores of the same candidates, and every refusal returns its ErrorCode while the core keeps
// serving.
#include "protocol/provider_core.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "ckks/galois_keys.h"
#include "ckks/serialization.h"
#include "core/bytes.h"
#include "core/sha256.h"
#include "protocol/provider_fixture.h"
#include "rerank/messages.h"
#include "ring/automorphism.h"

namespace privsearch::protocol {
namespace {

using testing_support::kDim;
using testing_support::kDocs;
using testing_support::kK;
using testing_support::ProviderCoreTest;

TEST_F(ProviderCoreTest, ServerInfoDescribesTheProvider) {
  const auto core = make_core();
  const auto info = core->server_info();
  EXPECT_EQ(info.protocol_version(), kProtocolVersion);
  EXPECT_EQ(info.params_id(), to_byte_string(params.id()));
  EXPECT_EQ(info.artifact_version(), "artifact-v1");
  EXPECT_EQ(info.dim(), kDim);
  EXPECT_EQ(info.documents(), kDocs);
  ASSERT_EQ(info.kernels_size(), 1);
  EXPECT_EQ(info.kernels(0), "fast");
  // This test links the client (key generation) into the provider's process, and the linker
  // says so; the provider binary itself reports false (provider_process_test).
  EXPECT_TRUE(info.attestation().secret_key_code_linked());
  EXPECT_TRUE(info.attestation().store_read_only());
  EXPECT_EQ(info.attestation().process_id(), static_cast<std::uint32_t>(::getpid()));
}

TEST_F(ProviderCoreTest, RerankMatchesPlaintextScores) {
  const auto core = make_core();
  const auto key_id = upload(*core);
  EXPECT_EQ(key_id.size(), 32u);
  const auto resp = core->rerank(request(key_id, ids_));
  expect_scores(resp, ids_);
  EXPECT_GT(resp.provider_ms(), 0.0);
  EXPECT_EQ(resp.scores_remaining(), ProviderLimits{}.scores_per_key_id - ids_.size());
}

TEST_F(ProviderCoreTest, KeyIdIsTheHashOfTheKeySet) {
  const auto core = make_core();
  const auto req = upload_request();
  EXPECT_EQ(core->upload_keys(req).key_id(), to_byte_string(sha256(byte_view(req.galois_keys()))));
}

class ProviderErrorTest : public ProviderCoreTest {
 protected:
  // After any refusal the same core still answers a valid request correctly.
  void expect_still_serving(ProviderCore& core, const std::string& key_id) {
    expect_scores(core.rerank(request(key_id, ids_)), ids_);
  }
};

TEST_F(ProviderErrorTest, UnknownKeyId) {
  const auto core = make_core();
  const auto key_id = upload(*core);
  const auto resp = core->rerank(request(std::string(32, '\x01'), ids_));
  EXPECT_EQ(resp.error().code(), v1::UNKNOWN_KEY_ID);
  expect_still_serving(*core, key_id);
}

TEST_F(ProviderErrorTest, WrongArtifactVersion) {
  const auto core = make_core();
  const auto key_id = upload(*core);
  auto req = request(key_id, ids_);
  req.set_artifact_version("artifact-v0");
  EXPECT_EQ(core->rerank(req).error().code(), v1::WRONG_ARTIFACT_VERSION);
  expect_still_serving(*core, key_id);
}

TEST_F(ProviderErrorTest, TooManyCandidates) {
  ProviderLimits limits;
  limits.max_candidates = kK;
  const auto core = make_core(limits);
  const auto key_id = upload(*core);
  const auto resp = core->rerank(request(key_id, {1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(resp.error().code(), v1::TOO_MANY_CANDIDATES);
  expect_still_serving(*core, key_id);
}

TEST_F(ProviderErrorTest, MalformedQuery) {
  const auto core = make_core();
  const auto key_id = upload(*core);
  auto req = request(key_id, ids_);
  auto q = req.query();
  q[q.size() / 2] ^= 0x5a;  // corrupt the ciphertext body
  q.resize(q.size() - 3);   // and truncate it
  req.set_query(q);
  EXPECT_EQ(core->rerank(req).error().code(), v1::MALFORMED_REQUEST);
  req.set_query("not a request");
  EXPECT_EQ(core->rerank(req).error().code(), v1::MALFORMED_REQUEST);
  req = request(key_id, ids_);
  req.add_candidate_ids(5);  // K in the query no longer matches the ID count
  EXPECT_EQ(core->rerank(req).error().code(), v1::MALFORMED_REQUEST);
  req = request(key_id, ids_);
  req.set_key_id("short");
  EXPECT_EQ(core->rerank(req).error().code(), v1::MALFORMED_REQUEST);
  expect_still_serving(*core, key_id);
}

TEST_F(ProviderErrorTest, UnknownCandidate) {
  const auto core = make_core();
  const auto key_id = upload(*core);
  const auto resp = core->rerank(request(key_id, {1, 2, 3, 4, 5, kDocs}));
  EXPECT_EQ(resp.error().code(), v1::UNKNOWN_CANDIDATE);
  expect_still_serving(*core, key_id);
}

TEST_F(ProviderErrorTest, BudgetExhausted) {
  ProviderLimits limits;
  limits.scores_per_key_id = 2 * ids_.size();
  const auto core = make_core(limits);
  const auto key_id = upload(*core);
  expect_scores(core->rerank(request(key_id, ids_)), ids_);
  const auto second = core->rerank(request(key_id, ids_));
  expect_scores(second, ids_);
  EXPECT_EQ(second.scores_remaining(), 0u);
  EXPECT_EQ(core->rerank(request(key_id, ids_)).error().code(), v1::BUDGET_EXHAUSTED);
  // A new key epoch gets a fresh budget.
  expect_still_serving(*core, upload(*core));
}

TEST_F(ProviderErrorTest, MissingRotationKey) {
  const auto core = make_core();
  const auto key_id = upload(*core);
  // A valid set holding one of the rotations the layout needs.
  auto req = upload_request();
  const auto full = *ckks::deserialize_galois_keys(params, byte_view(req.galois_keys()));
  ASSERT_GT(full.size(), 1u);
  const auto& [elt, key] = *full.keys().begin();
  const auto step = *ring::step_for_galois_elt(elt, params.n());
  req.set_galois_keys(to_byte_string(ckks::serialize_galois_keys(
      params, ckks::GaloisKeys(params.id(), {step}, false, {{elt, key}}))));
  const auto partial = core->upload_keys(req);
  ASSERT_EQ(partial.result_case(), v1::UploadKeysResponse::kKeyId) << partial.error().message();
  EXPECT_EQ(core->rerank(request(partial.key_id(), ids_)).error().code(), v1::MISSING_ROTATION_KEY);
  expect_still_serving(*core, key_id);
}

TEST_F(ProviderErrorTest, OversizedMessages) {
  ProviderLimits limits;
  limits.max_message_bytes = 4096;
  const auto core = make_core(limits);
  const auto up = upload_request();
  ASSERT_GT(up.ByteSizeLong(), 4096u);
  EXPECT_EQ(core->upload_keys(up).error().code(), v1::MESSAGE_TOO_LARGE);
  v1::RerankRequest big;
  big.set_artifact_version("artifact-v1");
  big.set_query(std::string(5000, 'x'));
  EXPECT_EQ(core->rerank(big).error().code(), v1::MESSAGE_TOO_LARGE);
}

TEST_F(ProviderErrorTest, UploadRefusals) {
  const auto core = make_core();
  const auto key_id = upload(*core);
  v1::UploadKeysRequest req;
  req.set_params_id(std::string(32, '\0'));
  req.set_galois_keys("x");
  EXPECT_EQ(core->upload_keys(req).error().code(), v1::PARAMS_MISMATCH);
  req.set_params_id(to_byte_string(params.id()));
  EXPECT_EQ(core->upload_keys(req).error().code(), v1::MALFORMED_REQUEST);
  ProviderLimits limits;
  limits.max_rotation_keys = 1;
  const auto small = make_core(limits);
  const auto layout = *rerank::make_layout(params, rerank::Kernel::kFast, kDim, kK);
  ASSERT_GT(layout.rotation_steps().size(), 1u);
  req.set_galois_keys(upload_request().galois_keys());
  EXPECT_EQ(small->upload_keys(req).error().code(), v1::MALFORMED_REQUEST);
  expect_still_serving(*core, key_id);
}

TEST_F(ProviderErrorTest, ParamsMismatchInQuery) {
  const auto core = make_core();
  const auto key_id = upload(*core);
  auto req = request(key_id, ids_);
  auto rr = *rerank::deserialize_request(byte_view(req.query()));
  rr.params_id[0] ^= 1;
  req.set_query(to_byte_string(rerank::serialize_request(rr)));
  EXPECT_EQ(core->rerank(req).error().code(), v1::PARAMS_MISMATCH);
  expect_still_serving(*core, key_id);
}

// A query ciphertext at any scale but the preset's is a malformed request, never INTERNAL (a
// hostile client set the scale field to 2^40..2^79 and got INTERNAL before).
TEST_F(ProviderErrorTest, QueryScaleOtherThanThePresetsIsMalformed) {
  const auto core = make_core();
  const auto key_id = upload(*core);
  for (int log_scale : {1, params.log_scale() - 1, params.log_scale() + 1, 40, 60, 79}) {
    if (log_scale == params.log_scale()) continue;  // the one scale that is accepted
    auto req = request(key_id, ids_);
    auto rr = *rerank::deserialize_request(byte_view(req.query()));
    auto ct = *ckks::deserialize_ciphertext(params, rr.query);
    ct.set_scale(std::ldexp(1.0, log_scale));
    rr.query = *ckks::serialize_ciphertext(params, ct, ckks::CiphertextForm::kSeeded);
    req.set_query(to_byte_string(rerank::serialize_request(rr)));
    EXPECT_EQ(core->rerank(req).error().code(), v1::MALFORMED_REQUEST) << "scale 2^" << log_scale;
  }
  expect_still_serving(*core, key_id);
}

TEST_F(ProviderErrorTest, DuplicateCandidateIdsAreRefused) {
  const auto core = make_core();
  const auto key_id = upload(*core);
  auto ids = ids_;
  ids.back() = ids.front();
  const auto resp = core->rerank(request(key_id, ids));
  EXPECT_EQ(resp.error().code(), v1::MALFORMED_REQUEST);
  EXPECT_NE(resp.error().message().find("twice"), std::string::npos);
  expect_still_serving(*core, key_id);
}

// The exact store changed under a serving provider: a row rewritten in place gives DATA_LOSS
// for requests that name it (others still answer correctly); a truncated file gives DATA_LOSS,
// not SIGBUS.
TEST_F(ProviderErrorTest, RowsChangedOnDiskAreDataLossNeverWrongScores) {
  const auto core = make_core();
  const auto key_id = upload(*core);
  const auto file = dir / "exact.bin";
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(64 + 17 * kDim * 4);  // row 17, after the 64-byte header
    const float changed[kDim] = {9, 9, 9, 9, 9, 9, 9, 9};
    f.write(reinterpret_cast<const char*>(changed), sizeof(changed));
  }
  const auto changed = core->rerank(request(key_id, ids_));  // ids_ contains 17
  EXPECT_EQ(changed.error().code(), v1::DATA_LOSS);
  EXPECT_NE(changed.error().message().find("row 17"), std::string::npos);
  const std::vector<std::uint64_t> others{3, 0, 39, 22, 8, 1};
  expect_scores(core->rerank(request(key_id, others)), others);
  std::filesystem::resize_file(file, 64 + 20 * kDim * 4);  // rows 20.. gone
  const std::vector<std::uint64_t> cut{3, 0, 39, 22, 8, 1};
  EXPECT_EQ(core->rerank(request(key_id, cut)).error().code(), v1::DATA_LOSS);
  const std::vector<std::uint64_t> kept{3, 0, 19, 2, 8, 1};
  expect_scores(core->rerank(request(key_id, kept)), kept);
}

}  // namespace
}  // namespace privsearch::protocol

namespace privsearch::protocol::testing_support {
namespace {

// Circuit-privacy boundary (search paper section 4.4): evaluation is deterministic, so one
// request evaluated again gives a byte-identical response; fresh encryptions give distinct ones.
TEST_F(ProviderCoreTest, RepeatedRequestGivesOneResponseFreshEncryptionsDiffer) {
  auto core = make_core();
  const auto key = upload(*core);
  const auto req = request(key, ids_);
  std::set<std::string> fixed, fresh;
  for (int r = 0; r < 5; ++r) {
    const auto resp = core->rerank(req);
    ASSERT_FALSE(resp.has_error());
    fixed.insert(resp.payload());
  }
  for (int r = 0; r < 5; ++r) {
    const auto resp = core->rerank(request(key, ids_));
    ASSERT_FALSE(resp.has_error());
    fresh.insert(resp.payload());
  }
  EXPECT_EQ(fixed.size(), 1u);
  EXPECT_EQ(fresh.size(), 5u);
}

// The optional defence: with noise flooding the same request no longer gives one response,
// and the scores still decrypt (rerank/flooding.h, ckks/rerandomize.h).
TEST_F(ProviderCoreTest, FloodedResponsesDifferForOneRequestAndStillDecrypt) {
  auto core = make_core({}, 16);
  EXPECT_EQ(core->server_info().flood_security_bits(), 16u);
  const auto key = upload(*core, /*with_public_key=*/true);
  const auto req = request(key, ids_);
  std::set<std::string> fixed;
  for (int r = 0; r < 5; ++r) {
    const auto resp = core->rerank(req);
    expect_scores(resp, ids_);
    fixed.insert(resp.payload());
  }
  EXPECT_EQ(fixed.size(), 5u);
}

TEST_F(ProviderCoreTest, FloodingProviderRequiresAPublicKey) {
  auto core = make_core({}, 16);
  const auto plain = core->upload_keys(upload_request(false));
  EXPECT_EQ(plain.error().code(), v1::PUBLIC_KEY_REQUIRED);
  auto bad = upload_request(true);
  bad.mutable_public_key()->resize(bad.public_key().size() - 1);
  EXPECT_EQ(core->upload_keys(bad).error().code(), v1::MALFORMED_REQUEST);
  // After the refusals a valid upload still works.
  const auto key = upload(*core, true);
  expect_scores(core->rerank(request(key, ids_)), ids_);
}

TEST_F(ProviderCoreTest, FloodingConfigurationsThatCannotWorkAreRefused) {
  ProviderConfig too_much(params);
  too_much.artifact_version = "artifact-v1";
  too_much.flood_security_bits = 60;
  const auto r = ProviderCore::create(std::move(too_much), store.get());
  EXPECT_EQ(r.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(r.status().message().find("at most"), std::string::npos) << r.status().message();
  ProviderConfig paper_kernel(params);
  paper_kernel.kernels = {rerank::Kernel::kOneResponse};
  paper_kernel.flood_security_bits = 8;
  EXPECT_EQ(ProviderCore::create(std::move(paper_kernel), store.get()).status().code(),
            StatusCode::kInvalidArgument);
  ProviderConfig negative(params);
  negative.flood_security_bits = -3;
  EXPECT_EQ(ProviderCore::create(std::move(negative), store.get()).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace privsearch::protocol::testing_support
