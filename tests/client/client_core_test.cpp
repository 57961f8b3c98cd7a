// The client core (src/client/core), which the native and the browser clients share: the refusal
// table against the protocol's enum, the send order and the ranking against plain reference
// arithmetic, and the hintless PirClient's checks (batch limit, answer count, foreign batches,
// digests checked after the fetch), each with a case that must fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "client/core/pir_client.h"
#include "client/core/query_order.h"
#include "client/core/refusal.h"
#include "client/core/trust_check.h"
#include "core/bytes.h"
#include "core/sha256.h"
#include "index/artifacts/manifest_signature.h"
#include "pir/hintless/server.h"
#include "pir/hintless_test_util.h"
#include "protocol/privsearch.pb.h"

namespace privsearch::client::core {
namespace {

TEST(RefusalTable, EqualsTheProtocolsErrorCodesNameForNameAndNumberForNumber) {
  const auto* e = v1::ErrorCode_descriptor();
  ASSERT_EQ(static_cast<std::size_t>(e->value_count()), refusal_table().size());
  for (int i = 0; i < e->value_count(); ++i) {
    const auto row = refusal(e->value(i)->number());
    ASSERT_TRUE(row.has_value()) << e->value(i)->name();
    EXPECT_EQ(row->name, e->value(i)->name());
    EXPECT_EQ(refusal(row->name)->code, row->code);
  }
  EXPECT_FALSE(refusal(999).has_value());
  EXPECT_FALSE(refusal("NOT_A_CODE").has_value());
}

TEST(RefusalTable, OneMapForEveryCallerAndItsRetryPolicy) {
  // RATE_LIMITED was kInvalidArgument in the fetcher's map and kResourceExhausted in the
  // session's: one answer now.
  EXPECT_EQ(refusal_status("x", v1::RATE_LIMITED, "m").code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(refusal_status("x", v1::UNKNOWN_PIR_CLIENT, "m").code(), StatusCode::kNotFound);
  EXPECT_EQ(refusal_status("x", v1::UNAUTHENTICATED, "m").code(), StatusCode::kUnauthenticated);
  const Status s = refusal_status("the fetch", v1::PIR_VERSION_MISMATCH, "rebuilt");
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("provider refused the fetch: PIR_VERSION_MISMATCH: rebuilt"),
            std::string::npos);
  EXPECT_NE(s.message().find("refresh the local index"), std::string::npos);
  EXPECT_EQ(refusal_status("x", 77, "new").code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(renews_key_epoch(v1::UNKNOWN_KEY_ID, false));
  EXPECT_TRUE(renews_key_epoch(v1::BUDGET_EXHAUSTED, true));
  EXPECT_FALSE(renews_key_epoch(v1::BUDGET_EXHAUSTED, false));
  EXPECT_FALSE(renews_key_epoch(v1::QUOTA_EXHAUSTED, true));
  EXPECT_EQ(*backoff_ms(0, 1.0), 10.0);
  EXPECT_EQ(*backoff_ms(3, 0.5), 40.0);
  EXPECT_FALSE(backoff_ms(kBackoffRetries, 1.0).has_value());
}

TEST(QueryOrder, UnitQueryIsUnitAndTheZeroQueryNamesWhatItWas) {
  const std::vector<double> z = {3, 0, 4};
  const auto u = *unit_query(std::span<const double>(z), QueryKind::kVector);
  EXPECT_DOUBLE_EQ(u[0], 0.6);
  EXPECT_DOUBLE_EQ(u[2], 0.8);
  const std::vector<float> zero(8, 0.0f);
  const auto text = unit_query(std::span<const float>(zero), QueryKind::kText);
  EXPECT_EQ(text.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(text.status().message().find("no known terms"), std::string::npos);
  const auto vec = unit_query(std::span<const float>(zero), QueryKind::kProjected);
  EXPECT_NE(vec.status().message().find("vector is zero"), std::string::npos);
}

TEST(QueryOrder, SendOrderIsAPermutationAndRestoreItsInverse) {
  std::vector<std::uint32_t> candidates(257);
  std::iota(candidates.begin(), candidates.end(), 1000);
  Prng prng = Prng::create();
  const auto order = SendOrder::make(candidates, &prng);
  auto sorted = order.sent();
  std::sort(sorted.begin(), sorted.end());
  EXPECT_TRUE(std::equal(sorted.begin(), sorted.end(), candidates.begin()));
  EXPECT_FALSE(std::equal(order.sent().begin(), order.sent().end(), candidates.begin()));
  // A score that is a function of the document comes back to its document.
  std::vector<double> sent_scores;
  for (const auto doc : order.sent()) sent_scores.push_back(static_cast<double>(doc) * 0.5);
  const auto restored = *order.restore(sent_scores);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    EXPECT_EQ(restored[i], candidates[i] * 0.5);
  }
  EXPECT_EQ(order.restore(std::span<const double>(sent_scores).first(3)).status().code(),
            StatusCode::kDataLoss);
  const auto kept = SendOrder::make(candidates, nullptr);
  EXPECT_TRUE(std::equal(kept.sent().begin(), kept.sent().end(), candidates.begin()));
}

TEST(QueryOrder, RankingIsBestFirstWithTiesInCandidateOrder) {
  const std::vector<double> scores = {0.1, 0.9, 0.5, 0.9, -1, 0.5};
  EXPECT_EQ(rank_by_score(scores, 10), (std::vector<std::size_t>{1, 3, 2, 5, 0, 4}));
  EXPECT_EQ(rank_by_score(scores, 3), (std::vector<std::size_t>{1, 3, 2}));
  EXPECT_TRUE(rank_by_score({}, 3).empty());
}

TEST(TrustCheck, RollbackAndForkAreRefusedNewerIsRememberedTheSameIsNot) {
  const SeenVersion seen{5, std::string(64, 'a')};
  EXPECT_TRUE(*check_seen_version({6, std::string(64, 'b')}, seen, "k", "idx"));
  EXPECT_TRUE(*check_seen_version({1, std::string(64, 'b')}, std::nullopt, "k", "idx"));
  EXPECT_FALSE(*check_seen_version(seen, seen, "k", "idx"));
  const auto rollback = check_seen_version({4, std::string(64, 'c')}, seen, "k", "idx");
  EXPECT_EQ(rollback.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(rollback.status().message().find("rollback"), std::string::npos);
  const auto fork = check_seen_version({5, std::string(64, 'c')}, seen, "k", "idx");
  EXPECT_NE(fork.status().message().find("fork"), std::string::npos);
  EXPECT_EQ(check_seen_version({0, "x"}, std::nullopt, "k", "idx").status().code(),
            StatusCode::kFailedPrecondition);
}

TEST(TrustCheck, SignatureClaimsNameTheirKeyVersionAndSequence) {
  index::Manifest m;
  m.version_id = std::string(64, 'e');
  m.sequence = 3;
  index::ManifestSignature s{"0123456789abcdef", m.version_id, 3, {}};
  EXPECT_TRUE(index::check_signature_claims(s, m, "0123456789abcdef", "i").ok());
  EXPECT_EQ(index::check_signature_claims(s, m, "fedcba9876543210", "i").code(),
            StatusCode::kUnauthenticated);
  s.sequence = 2;
  EXPECT_EQ(index::check_signature_claims(s, m, "0123456789abcdef", "i").code(),
            StatusCode::kUnauthenticated);
  // The key id is the first 16 hex digits of SHA-256 of the raw key (the page computes it here).
  const std::array<std::uint8_t, 32> raw{};
  EXPECT_EQ(index::ed25519_key_id(raw), to_hex(sha256(raw)).substr(0, 16));
  const auto message = index::manifest_signature_message("ab");
  EXPECT_EQ(std::string(message.begin(), message.end()), "privsearch manifest signature v1\nab");
}

// A small hintless database (test parameters) and the core's client of it.
class HintlessPirClientTest : public testing::Test {
 protected:
  void SetUp() override {
    params = pir::hintless::test_util::test_params();
    records = pir::hintless::test_util::random_records(40, 24, 40, false);
    shape = *pir::hintless::choose_hintless_shape(params, 40, 24);
    server = *pir::hintless::HintlessServer::create(params, shape,
                                                    pir::hintless::test_util::source(records));
    info = pir::hintless::encode_public_info(params, shape);
    options.allow_insecure = true;
    options.provider_max_batch = 4;
  }
  std::vector<std::string> answer(const PirBatch& batch) const {
    std::vector<pir::hintless::HintlessQuery> queries;
    for (const auto& q : batch.queries) {
      queries.push_back(*pir::hintless::decode_query(params, shape, byte_view(q)));
    }
    const auto responses = server->answer(queries);
    EXPECT_TRUE(responses.ok());
    std::vector<std::string> out;
    if (!responses.ok()) return out;
    for (const auto& r : responses.value()) {
      out.push_back(to_byte_string(pir::hintless::encode_response(params, r)));
    }
    return out;
  }

  pir::hintless::HintlessParams params;
  pir::hintless::HintlessShape shape;
  std::vector<std::vector<std::uint8_t>> records;
  std::unique_ptr<pir::hintless::HintlessServer> server;
  std::vector<std::uint8_t> info;
  PirClientOptions options;
  Prng prng = Prng::create();
};

TEST_F(HintlessPirClientTest, FetchesTheStoredRecordsAndRefusesWhatDoesNotFit) {
  const auto pir = *make_hintless_pir_client(info, options);
  EXPECT_EQ(pir->max_batch(), 4u);
  const std::uint64_t wanted[] = {0, 39, 7};
  auto batch = *pir->prepare(wanted, prng);
  ASSERT_EQ(batch.queries.size(), 3u);
  const auto answers = answer(batch);
  const auto got = *pir->finish(std::move(batch), answers);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(std::equal(records[wanted[i]].begin(), records[wanted[i]].end(), got[i].begin()));
  }
  const std::uint64_t five[] = {1, 2, 3, 4, 5}, past[] = {40};
  EXPECT_EQ(pir->prepare(five, prng).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(pir->prepare(past, prng).status().code(), StatusCode::kOutOfRange);
  // One answer short: DATA_LOSS, the batch's secrets gone with it.
  auto short_batch = *pir->prepare(wanted, prng);
  auto two = answer(short_batch);
  two.pop_back();
  EXPECT_EQ(pir->finish(std::move(short_batch), two).status().code(), StatusCode::kDataLoss);
  // A batch without secrets (not prepared here) is refused, not decoded.
  PirBatch foreign;
  foreign.indices = {1};
  const std::vector<std::string> one_answer = {"x"};
  EXPECT_EQ(pir->finish(std::move(foreign), one_answer).status().code(),
            StatusCode::kFailedPrecondition);
}

TEST_F(HintlessPirClientTest, AProviderOfAnotherShapeOrOverTheBudgetIsRefused) {
  auto wrong = options;
  wrong.expected_shape = index::PayloadShape{41, 24};
  EXPECT_EQ(make_hintless_pir_client(info, wrong).status().code(), StatusCode::kFailedPrecondition);
  auto tiny = options;
  tiny.request_budget = 100;
  EXPECT_EQ(make_hintless_pir_client(info, tiny).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(check_pir_shape(40, 3, options).code(), StatusCode::kDataLoss);
  auto lists = options;
  lists.payload_records = false;
  EXPECT_TRUE(check_pir_shape(40, 3, lists).ok());
  EXPECT_EQ(make_hintless_pir_client(std::span<const std::uint8_t>(info).first(9), options)
                .status()
                .code(),
            StatusCode::kDataLoss);
}

}  // namespace
}  // namespace privsearch::client::core
