// Budgets, identities, rate limits and the key cache's byte bound, through the provider core:
// what a client cannot reset by re-keying, by a reload or by a restart.
#include <filesystem>

#include "ckks/galois_keys.h"
#include "core/sha256.h"
#include "protocol/budget_ledger.h"
#include "protocol/provider_core.h"
#include "protocol/provider_fixture.h"

namespace privsearch::protocol::testing_support {
namespace {

class ProviderBudgetsTest : public ProviderCoreTest {
 protected:
  // Counts the requests of `caller` served before the first refusal (kept in `refusal`),
  // minting a new key epoch for every request (the re-keying attack: a fresh key set is a
  // fresh key-id budget).
  int served_with_rekeying(ProviderCore& core, const Caller& caller, int attempts,
                           v1::ErrorCode& refusal) {
    for (int i = 0; i < attempts; ++i) {
      const auto key_id = upload(core, false, caller);
      const auto resp = core.rerank(request(key_id, ids_), caller);
      if (resp.has_error()) {
        refusal = resp.error().code();
        return i;
      }
    }
    refusal = v1::ERROR_CODE_UNSPECIFIED;
    return attempts;
  }
};

TEST_F(ProviderBudgetsTest, IdentityBudgetHoldsAcrossKeyEpochs) {
  ProviderLimits limits;
  limits.scores_per_identity = 5 * ids_.size();  // five requests of K = 6
  limits.key_uploads = {0, 1};                   // unlimited uploads: the budget alone must hold
  const auto core = make_core(limits);
  v1::ErrorCode refusal{};
  // 12 attempts, each with a new key set: 5 served, then QUOTA_EXHAUSTED.
  EXPECT_EQ(served_with_rekeying(*core, {"alice", ""}, 12, refusal), 5);
  EXPECT_EQ(refusal, v1::QUOTA_EXHAUSTED);
  // Another identity is unaffected; an anonymous caller has only key-id budgets.
  EXPECT_EQ(served_with_rekeying(*core, {"bob", ""}, 2, refusal), 2);
  EXPECT_EQ(served_with_rekeying(*core, {}, 7, refusal), 7);
}

TEST_F(ProviderBudgetsTest, BudgetsSurviveAReloadAndARestart) {
  const auto journal = dir / "budgets.journal";
  ProviderLimits limits;
  limits.scores_per_key_id = 3 * ids_.size();
  limits.scores_per_identity = 4 * ids_.size();
  const Caller alice{"alice", ""};
  const auto first_upload = upload_request();
  std::string key_id;
  {
    auto state = ProviderCore::make_state(limits, open_file_ledger(journal).value());
    auto core = make_core(limits, 0, state);
    key_id = core->upload_keys(first_upload, alice).key_id();
    expect_scores(core->rerank(request(key_id, ids_), alice), ids_);
    expect_scores(core->rerank(request(key_id, ids_), alice), ids_);
    // A reload: a new core over the same state keeps the cached keys and the spent counts.
    core = make_core(limits, 0, state);
    const auto third = core->rerank(request(key_id, ids_), alice);
    expect_scores(third, ids_);
    EXPECT_EQ(third.scores_remaining(), 0u);
    EXPECT_EQ(core->rerank(request(key_id, ids_), alice).error().code(), v1::BUDGET_EXHAUSTED);
  }
  // A restart: a new state from the same journal. Re-uploading the same set does not refill it.
  auto state = ProviderCore::make_state(limits, open_file_ledger(journal).value());
  const auto core = make_core(limits, 0, state);
  const auto again = core->upload_keys(first_upload, alice);
  ASSERT_FALSE(again.has_error()) << again.error().message();
  EXPECT_EQ(again.key_id(), key_id);
  EXPECT_EQ(again.score_budget(), 0u);
  EXPECT_EQ(core->rerank(request(key_id, ids_), alice).error().code(), v1::BUDGET_EXHAUSTED);
  // A new key epoch: one request left of the identity's 4.
  v1::ErrorCode refusal{};
  EXPECT_EQ(served_with_rekeying(*core, alice, 5, refusal), 1);
  EXPECT_EQ(refusal, v1::QUOTA_EXHAUSTED);
  EXPECT_EQ(core->server_info().budget_store(), "file:" + journal.string());
}

TEST_F(ProviderBudgetsTest, KeyUploadsAreRateLimitedPerClient) {
  ProviderLimits limits;
  limits.key_uploads = {/*per_minute=*/1, /*burst=*/2};
  const auto core = make_core(limits);
  const Caller a{"", "10.0.0.1"}, b{"", "10.0.0.2"};
  EXPECT_FALSE(core->upload_keys(upload_request(), a).has_error());
  EXPECT_FALSE(core->upload_keys(upload_request(), a).has_error());
  const auto third = core->upload_keys(upload_request(), a);
  ASSERT_EQ(third.error().code(), v1::RATE_LIMITED);
  EXPECT_NE(third.error().message().find("retry in"), std::string::npos);
  EXPECT_FALSE(core->upload_keys(upload_request(), b).has_error());  // its own bucket
}

TEST_F(ProviderBudgetsTest, KeyCacheIsBoundedByBytesAndReportsThem) {
  const auto probe = make_core();
  upload(*probe);
  const std::uint64_t one_set = probe->state().keys.cached_bytes();
  ASSERT_GT(one_set, 0u);
  // The memory of a set is what its polynomials occupy (4 per digit: b, a, two companions).
  EXPECT_GT(one_set, 4 * upload_request().galois_keys().size() / 2);
  ProviderLimits limits;
  limits.key_cache_bytes = 2 * one_set + one_set / 2;  // room for two sets
  limits.key_uploads = {0, 1};
  const auto core = make_core(limits);
  const auto first = upload(*core);
  upload(*core);
  const auto third = upload(*core);
  EXPECT_EQ(core->cached_key_sets(), 2u);
  EXPECT_LE(core->state().keys.cached_bytes(), limits.key_cache_bytes);
  EXPECT_EQ(core->rerank(request(first, ids_)).error().code(), v1::UNKNOWN_KEY_ID);
  expect_scores(core->rerank(request(third, ids_)), ids_);
  EXPECT_EQ(core->server_info().limits().key_cache_bytes(), limits.key_cache_bytes);
  // A set larger than the whole cache is refused before decoding.
  limits.key_cache_bytes = one_set / 2;
  const auto tiny = make_core(limits);
  EXPECT_EQ(tiny->upload_keys(upload_request()).error().code(), v1::OVERLOADED);
}

// A ledger whose store is down.
class UnavailableLedger final : public BudgetLedger {
 public:
  Result<BudgetCharge> charge(std::span<const BudgetAccount>, std::uint64_t) override {
    return Status(StatusCode::kUnavailable, "store unreachable");
  }
  Result<std::uint64_t> remaining(const BudgetAccount&) override {
    return Status(StatusCode::kUnavailable, "store unreachable");
  }
  std::string where() const override { return "down"; }
};

TEST_F(ProviderBudgetsTest, UnrecordableBudgetsFailClosed) {
  const ProviderLimits limits;
  auto working = make_core(limits);
  auto state = ProviderCore::make_state(limits, std::make_shared<UnavailableLedger>());
  const auto core = make_core(limits, 0, state);
  const auto req = upload_request();
  EXPECT_EQ(core->upload_keys(req).error().code(), v1::STATE_UNAVAILABLE);
  // The key set is cached (uploads do not charge), but no request is served unmetered.
  const auto key_id = to_byte_string(sha256(byte_view(req.galois_keys())));
  const auto resp = core->rerank(request(key_id, ids_));
  EXPECT_EQ(resp.error().code(), v1::STATE_UNAVAILABLE);
  EXPECT_FALSE(resp.has_payload());
}

TEST_F(ProviderBudgetsTest, EmptyKeySetIsRefused) {
  const auto core = make_core();
  v1::UploadKeysRequest req;
  req.set_params_id(to_byte_string(params.id()));
  req.set_galois_keys(to_byte_string(
      ckks::serialize_galois_keys(params, ckks::GaloisKeys(params.id(), {}, false, {}))));
  const auto resp = core->upload_keys(req);
  EXPECT_EQ(resp.error().code(), v1::MALFORMED_REQUEST);
  EXPECT_NE(resp.error().message().find("no rotation keys"), std::string::npos);
}

}  // namespace
}  // namespace privsearch::protocol::testing_support
