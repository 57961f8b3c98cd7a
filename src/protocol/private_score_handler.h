// The provider half of access-private scoring for one index version (search paper's
// access-private mode; scoring/answer.h): checks that need only public facts (version, m,
// exact size, zero padding), a charge of m queries to the caller's window account, and one pass
// of the scoring matrix over all m queries. It never sees a cluster id, a score or the query.
// ProviderCore hands PrivateScore requests to it. Thread safety: answer() may run concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "protocol/budget_ledger.h"
#include "protocol/privsearch.pb.h"
#include "protocol/provider_core.h"
#include "protocol/provider_state.h"
#include "scoring/layout.h"

namespace privsearch::protocol {

class PrivateScoreHandler {
 public:
  // `matrix` null: the index has no scoring database (PRIVATE_SCORING_UNAVAILABLE).
  PrivateScoreHandler(const ProviderLimits& limits, std::string artifact_version,
                      std::shared_ptr<const scoring::ScoringMatrix> matrix,
                      std::shared_ptr<ProviderState> state);

  v1::PrivateScoreResponse answer(const v1::PrivateScoreRequest& request, const Caller& caller);

 private:
  // Charges `queries` to the caller's window account; the refusal or nullopt.
  std::optional<v1::Error> charge(const Caller& caller, std::uint64_t queries);
  // The caller's window account (none when unmetered).
  std::optional<BudgetAccount> account(const Caller& caller) const;

  const ProviderLimits limits_;
  const std::string artifact_version_;
  const std::shared_ptr<const scoring::ScoringMatrix> matrix_;
  const std::shared_ptr<ProviderState> state_;
};

}  // namespace privsearch::protocol
