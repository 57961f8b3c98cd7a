// The client's rerank session against the in-process provider core: a round trip equals the
// plaintext scores, and every validation of build_request / decode_response is a named error.
#include "client/rerank_session.h"

#include <gtest/gtest.h>

#include "core/bytes.h"
#include "protocol/provider_fixture.h"
#include "rerank/messages.h"

namespace privsearch::protocol::testing_support {
namespace {

class RerankSessionTest : public ProviderCoreTest {};

std::vector<double> unit(std::size_t d) {
  std::vector<double> z(d, 0.0);
  z[0] = 1.0;
  return z;
}

TEST_F(RerankSessionTest, RoundTripThroughTheProviderCoreMatchesPlaintext) {
  const auto core = make_core();
  const auto up = upload_request();
  EXPECT_FALSE(session.key_id(kK));  // a new epoch forgets the old id
  const auto resp = core->upload_keys(up);
  ASSERT_TRUE(resp.has_key_id());
  session.set_key_id(kK, resp.key_id());
  ASSERT_TRUE(session.key_id(kK));
  const auto q = unit(kDim);
  const auto pending = *session.build_request({q, ids_, "artifact-v1"});
  EXPECT_EQ(pending.layout.k(), ids_.size());
  EXPECT_EQ(pending.request.candidate_ids_size(), static_cast<int>(ids_.size()));
  const auto scores = *session.decode_response(pending, core->rerank(pending.request));
  for (std::size_t c = 0; c < ids_.size(); ++c) {
    EXPECT_NEAR(scores[c], docs.row(ids_[c])[0], 1e-3) << c;
  }
}

// The two halves (the query encrypted before the candidates are known, then the request) give
// the same scores; the halves refuse a candidate count other than the K encrypted for, a query
// that is not a unit vector, and K without keys.
TEST_F(RerankSessionTest, EncryptingBeforeTheCandidatesGivesTheSameScores) {
  const auto core = make_core();
  const auto resp = core->upload_keys(upload_request());
  session.set_key_id(kK, resp.key_id());
  std::vector<double> q(kDim, 0.0);
  q[1] = 0.6;
  q[2] = -0.8;
  auto encrypted = session.encrypt_query(q, ids_.size());
  ASSERT_TRUE(encrypted.ok()) << encrypted.status().to_string();
  const auto pending = session.complete_request(*encrypted, ids_, "artifact-v1");
  ASSERT_TRUE(pending.ok()) << pending.status().to_string();
  const auto scores = *session.decode_response(*pending, core->rerank(pending->request));
  for (std::size_t c = 0; c < ids_.size(); ++c) {
    EXPECT_NEAR(scores[c], 0.6 * docs.row(ids_[c])[1] - 0.8 * docs.row(ids_[c])[2], 1e-3) << c;
  }
  const std::vector<std::uint64_t> fewer(ids_.begin(), ids_.end() - 1);
  EXPECT_EQ(session.complete_request(*encrypted, fewer, "v").status().code(),
            StatusCode::kInvalidArgument);
  auto other_k = *session.encrypt_query(q, ids_.size() + 1);
  std::vector<std::uint64_t> more = ids_;
  more.push_back(0);
  EXPECT_EQ(session.complete_request(other_k, more, "v").status().code(),
            StatusCode::kFailedPrecondition);  // no key set for K + 1
  q[1] = 0.7;
  EXPECT_EQ(session.encrypt_query(q, ids_.size()).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(session.encrypt_query(unit(kDim), 0).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(RerankSessionTest, BuildRequestRefusesWhatWouldGiveWrongScores) {
  const auto q = unit(kDim);
  // No key set uploaded for this K yet.
  EXPECT_EQ(session.build_request({q, ids_, "v"}).status().code(), StatusCode::kFailedPrecondition);
  session.set_key_id(ids_.size(), std::string(32, 'k'));
  EXPECT_TRUE(session.build_request({q, ids_, "v"}).ok());
  // Not unit norm: the compact response bound assumes scores in [-1, 1].
  auto twice = q;
  twice[0] = 2.0;
  EXPECT_EQ(session.build_request({twice, ids_, "v"}).status().code(),
            StatusCode::kInvalidArgument);
  auto nan = q;
  nan[1] = std::nan("");
  EXPECT_EQ(session.build_request({nan, ids_, "v"}).status().code(), StatusCode::kInvalidArgument);
  // Wrong dimension and no candidates.
  EXPECT_EQ(session.build_request({unit(kDim + 1), ids_, "v"}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(session.build_request({q, {}, "v"}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(client::RerankSession::create(params, 0).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(RerankSessionTest, DecodeResponseNamesRefusalsAndRejectsForeignAnswers) {
  const auto core = make_core();
  session.set_key_id(ids_.size(), upload(*core));
  const auto q = unit(kDim);
  const auto pending = *session.build_request({q, ids_, "artifact-v1"});

  v1::RerankResponse refused;
  refused.mutable_error()->set_code(v1::BUDGET_EXHAUSTED);
  refused.mutable_error()->set_message("used up");
  const auto budget = session.decode_response(pending, refused);
  EXPECT_EQ(budget.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(budget.status().message().find("BUDGET_EXHAUSTED"), std::string::npos);
  refused.mutable_error()->set_code(v1::UNKNOWN_KEY_ID);
  EXPECT_EQ(session.decode_response(pending, refused).status().code(),
            StatusCode::kFailedPrecondition);

  // An answer to another request (K = 4) does not answer this one.
  session.set_key_id(4, session.key_id(ids_.size())->c_str());
  const std::vector<std::uint64_t> four{1, 2, 3, 4};
  const auto other = *session.build_request({q, four, "artifact-v1"});
  const auto other_resp = core->rerank(other.request);
  ASSERT_TRUE(other_resp.has_payload()) << other_resp.error().message();
  EXPECT_FALSE(session.decode_response(pending, other_resp).ok());

  // A truncated payload.
  auto cut = core->rerank(pending.request);
  ASSERT_TRUE(cut.has_payload());
  cut.mutable_payload()->resize(cut.payload().size() / 2);
  EXPECT_EQ(session.decode_response(pending, cut).status().code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace privsearch::protocol::testing_support
