// The provider core under the packed kernel's preset (rerank/packed.h, at n = 64 for speed): a
// session's round trip equals the plaintext scores with and without flooding, and what a packed
// provider must refuse gets its named error — a slot-kernel client (other params id), a packed
// query that claims the fast kernel, a truncated query, rows above the kernel's norm, a lambda
// the preset cannot afford.
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
  for (auto& v : wide.data) v *= 10.0f;  // norms far above 2
  ASSERT_TRUE(index::ExactStore::write(dir / "wide.bin", wide).ok());
  const auto wide_store = *index::ExactStore::open(dir / "wide.bin");
  const auto bad = ProviderCore::create(ProviderConfig(params), &wide_store, nullptr);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace privsearch::protocol::testing_support
