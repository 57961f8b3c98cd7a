// The provider core under the packed kernel's preset (rerank/packed.h, at n = 64 for speed): a
// session's round trip equals the plaintext scores with and without flooding, and what a packed
// provider must refuse gets its named error — a slot-kernel client (other params id), a packed
// query that claims the fast kernel, a truncated query, a store or score bound that leaves no row
// scale, a response precision the widths cannot reach, a lambda the preset cannot afford.
#include <gtest/gtest.h>

#include "ckks/param_sets.h"
#include "core/bytes.h"
#include "protocol/provider_fixture.h"
#include "rerank/messages.h"

namespace privsearch::protocol::testing_support {
namespace {

ckks::Params small_packed_params() {
  auto l = ckks::packed_n4096_literal();
  l.name = "insecure-test-packed-n64";
  l.n = 64;
  l.insecure_for_tests = true;
  return *ckks::Params::create(l);
}

class PackedProviderTest : public ProviderCoreTest {
 protected:
  PackedProviderTest() : ProviderCoreTest(small_packed_params()) {}
};

TEST_F(PackedProviderTest, RoundTripMatchesPlaintextWithAndWithoutFlooding) {
  EXPECT_EQ(rerank::kernel_for_params(params), rerank::Kernel::kPacked);
  for (const int flood_bits : {0, 4}) {
    const auto core = make_core({}, flood_bits);
    const auto info = core->server_info();
    ASSERT_EQ(info.kernels_size(), 1);
    EXPECT_EQ(info.kernels(0), "packed");
    const auto key_id = upload(*core, flood_bits > 0);
    expect_scores(core->rerank(request(key_id, ids_)), ids_);
  }
}

TEST_F(PackedProviderTest, RefusesSlotKernelClientsAndForgedHeaders) {
  const auto core = make_core();
  const auto key_id = upload(*core);
  // A client of the slot kernels' preset: its keys and queries name other params.
  auto slot_session =
      *client::RerankSession::create(*ckks::Params::create(ckks::insecure_test_literal(64)), kDim,
                                     ::privsearch::testing::test_prng(5));
  EXPECT_EQ(core->upload_keys(*slot_session.make_key_upload(kK, false)).error().code(),
            v1::PARAMS_MISMATCH);
  slot_session.set_key_id(kK, key_id);
  const std::vector<double> e0 = {1, 0, 0, 0, 0, 0, 0, 0};
  const auto slot_req = slot_session.build_request({e0, ids_, "artifact-v1"})->request;
  EXPECT_EQ(core->rerank(slot_req).error().code(), v1::PARAMS_MISMATCH);
  // The packed query relabelled as a fast-kernel query: not offered here.
  auto req = request(key_id, ids_);
  auto rr = *rerank::deserialize_request(byte_view(req.query()));
  rr.kernel = rerank::Kernel::kFast;
  req.set_query(to_byte_string(rerank::serialize_request(rr)));
  EXPECT_EQ(core->rerank(req).error().code(), v1::MALFORMED_REQUEST);
  // A truncated query ciphertext.
  req = request(key_id, ids_);
  rr = *rerank::deserialize_request(byte_view(req.query()));
  rr.query.resize(rr.query.size() / 2);
  req.set_query(to_byte_string(rerank::serialize_request(rr)));
  EXPECT_EQ(core->rerank(req).error().code(), v1::MALFORMED_REQUEST);
  // And the provider still serves.
  expect_scores(core->rerank(request(key_id, ids_)), ids_);
}

TEST_F(PackedProviderTest, RefusesStoresAndFloodingItCannotServe) {
  ProviderConfig c(params);
  c.flood_security_bits = 40;
  const auto refused = ProviderCore::create(std::move(c), store.get(), nullptr);
  ASSERT_EQ(refused.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(refused.status().message().find("largest that fits"), std::string::npos);
  index::Matrix wide = docs;
  for (auto& v : wide.data) v *= 1e6f;  // norms ~5e5: no row scale is left below q / 4
  ASSERT_TRUE(index::ExactStore::write(dir / "wide.bin", wide).ok());
  const auto wide_store = *index::ExactStore::open(dir / "wide.bin");
  const auto bad = ProviderCore::create(ProviderConfig(params), &wide_store, nullptr);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  // A response precision the packed widths cannot reach: refused at start-up, not per request.
  ProviderConfig precise(params);
  precise.response_precision_bits = 40;
  EXPECT_EQ(ProviderCore::create(std::move(precise), store.get(), nullptr).status().code(),
            StatusCode::kOutOfRange);
  // An operator's score bound below the store's rows would let scores wrap: refused.
  ProviderConfig low(params);
  low.score_bound = store->max_row_norm() / 2;
  EXPECT_EQ(ProviderCore::create(std::move(low), store.get(), nullptr).status().code(),
            StatusCode::kInvalidArgument);
}

// Rows far from unit norm (the real indexes' projected rows reach norm ~20): the row scale
// follows the store's bound and the scores stay exact relative to it.
TEST_F(PackedProviderTest, LargeRowNormsScoreWithinTheirRelativeError) {
  index::Matrix big = docs;
  for (auto& v : big.data) v *= 40.0f;
  ASSERT_TRUE(index::ExactStore::write(dir / "big.bin", big).ok());
  const auto big_store = *index::ExactStore::open(dir / "big.bin");
  ProviderConfig c(params);
  c.params_name = params.name();
  c.artifact_version = "artifact-v1";
  const auto core = *ProviderCore::create(std::move(c), &big_store, nullptr);
  const auto key_id = upload(*core);
  const auto resp = core->rerank(request(key_id, ids_));
  ASSERT_EQ(resp.result_case(), v1::RerankResponse::kPayload) << resp.error().message();
  client::PendingRerank pending;
  pending.layout = *rerank::make_layout(params, rerank::Kernel::kPacked, kDim, ids_.size());
  const auto scores = *session.decode_response(pending, resp);
  for (std::size_t c2 = 0; c2 < ids_.size(); ++c2) {
    double want = 0;
    for (std::size_t j = 0; j < kDim; ++j) want += z[j] * big.row(ids_[c2])[j];
    EXPECT_NEAR(scores[c2], want, 1e-4 * big_store.max_row_norm()) << c2;
  }
}

}  // namespace
}  // namespace privsearch::protocol::testing_support
