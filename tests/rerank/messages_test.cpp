#include "rerank/messages.h"

#include <gtest/gtest.h>

#include "ckks/client/keygen.h"
#include "ckks/evaluator.h"
#include "ckks/param_sets.h"
#include "ckks/serialization.h"
#include "rerank/client/scores.h"
#include "testing/test_util.h"

namespace privsearch::rerank {
namespace {

class MessagesTest : public ::testing::Test {
 protected:
  MessagesTest()
      : params(*ckks::Params::create(ckks::insecure_test_literal(64))),
        prng(testing::test_prng(950)),
        keygen(params),
        sk(keygen.create_secret_key(prng)),
        layout(*make_layout(params, Kernel::kFast, 5, 3)) {
    const std::vector<double> z = {0.1, 0.2, 0.3, 0.4, 0.5};
    const auto ct = *encrypt_query(layout, params, sk, z, prng);
    request = request_for_layout(
        params, layout, *ckks::serialize_ciphertext(params, ct, ckks::CiphertextForm::kSeeded));
  }
  ckks::Params params;
  Prng prng;
  ckks::KeyGenerator keygen;
  ckks::SecretKey sk;
  KernelLayout layout;
  RerankRequest request;
};

TEST_F(MessagesTest, RequestRoundTripAndAcceptance) {
  const auto back = *deserialize_request(serialize_request(request));
  EXPECT_EQ(back.query, request.query);
  EXPECT_EQ(back.period, request.period);
  const auto accepted = *accept_request(params, back);
  EXPECT_EQ(accepted.layout.slot_map().size(), 3u);
}

TEST_F(MessagesTest, DimensionMismatchIsRejected) {
  auto r = request;
  r.dim = 6;  // the query was laid out for 5
  EXPECT_EQ(accept_request(params, r).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(MessagesTest, PaddedLengthMismatchIsRejected) {
  auto r = request;
  r.period += 1;
  const auto s = accept_request(params, r).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("padded length"), std::string::npos);
}

TEST_F(MessagesTest, TooManyCandidatesIsResourceExhausted) {
  auto r = request;
  r.k = 5000;
  EXPECT_EQ(accept_request(params, r).status().code(), StatusCode::kResourceExhausted);
  MessageLimits small;
  small.max_candidates = 2;
  EXPECT_EQ(deserialize_request(serialize_request(request), small).status().code(),
            StatusCode::kResourceExhausted);
}

TEST_F(MessagesTest, WrongParamsIdIsRejected) {
  auto r = request;
  r.params_id[0] ^= 1;
  EXPECT_EQ(accept_request(params, r).status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(MessagesTest, QueryBelowTheTopLevelIsRejected) {
  const auto ct = *ckks::deserialize_ciphertext(params, request.query);
  const auto low = *ckks::Evaluator(params).mod_switch_to_level(ct, 1);
  auto r = request;
  r.query = *ckks::serialize_ciphertext(params, low, ckks::CiphertextForm::kFull);
  EXPECT_EQ(accept_request(params, r).status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(MessagesTest, MalformedRequestsAreDataLoss) {
  auto b = serialize_request(request);
  auto bad_magic = b;
  bad_magic[0] = 'X';
  EXPECT_EQ(deserialize_request(bad_magic).status().code(), StatusCode::kDataLoss);
  auto bad_kernel = b;
  bad_kernel[40] = 9;
  EXPECT_EQ(deserialize_request(bad_kernel).status().code(), StatusCode::kDataLoss);
  auto truncated = b;
  truncated.resize(b.size() - 1);
  EXPECT_EQ(deserialize_request(truncated).status().code(), StatusCode::kDataLoss);
  auto trailing = b;
  trailing.push_back(0);
  EXPECT_EQ(deserialize_request(trailing).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(deserialize_response(b).status().code(), StatusCode::kDataLoss);  // wrong type
}

TEST_F(MessagesTest, ResponseRoundTripAndSlotMapCheck) {
  RerankResponse p{params.id(), Kernel::kFast,     5,    layout.period(),
                   3,           layout.slot_map(), true, {{1, 2, 3}}};
  const auto back = *deserialize_response(serialize_response(p));
  EXPECT_TRUE(check_response(params, layout, back).ok());
  auto moved = back;
  moved.slot_map[1].slot += 1;
  EXPECT_EQ(check_response(params, layout, moved).code(), StatusCode::kFailedPrecondition);
  auto other = back;
  other.k = 2;
  other.slot_map.pop_back();
  EXPECT_EQ(check_response(params, layout, other).code(), StatusCode::kFailedPrecondition);
  MessageLimits tiny;
  tiny.max_ciphertext_bytes = 2;
  EXPECT_EQ(deserialize_response(serialize_response(p), tiny).status().code(),
            StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace privsearch::rerank
