// What a provider keeps about its clients, apart from any one index version: uploaded key sets,
// request budgets and per-client rate limits. A reload (new index) builds a new ProviderCore
// around the same state, so keys stay cached and budgets stay spent; the budgets' ledger is
// durable (a journal file by default), so a restart does not reset them either.
// The scale-out tier puts the budgets and key sets in Redis, shared by replicas.
// Thread safety: every member is safe to use concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "protocol/budget_ledger.h"
#include "protocol/key_cache.h"
#include "protocol/rate_limiter.h"
#include "protocol/shared_key_store.h"

namespace privsearch::protocol {

// Who sent a request, as the transport saw it.
struct Caller {
  std::string identity;  // authenticated identity (protocol/identities.h); empty: anonymous
  std::string peer;      // the transport's peer address without the port; empty: in-process
  // The key rate limits are kept under: the identity when there is one, else the peer address.
  std::string rate_key() const {
    if (!identity.empty()) return "identity:" + identity;
    return peer.empty() ? "local" : "peer:" + peer;
  }
};

struct ProviderState {
  ProviderState(std::shared_ptr<BudgetLedger> ledger, std::size_t max_key_sets,
                std::uint64_t key_cache_bytes, RateLimit upload_rate)
      : budgets(std::move(ledger)), keys(max_key_sets, key_cache_bytes), key_uploads(upload_rate) {}
  std::shared_ptr<BudgetLedger> budgets;
  KeyCache keys;
  RateLimiter key_uploads;
  // Key sets shared with the other replicas (Redis); null: this process's uploads only.
  std::shared_ptr<SharedKeyStore> shared_keys;
  // The wall clock (Unix seconds) key sets are stamped and expire by
  // (ProviderLimits::key_set_ttl_s); tests advance it instead of sleeping out a TTL.
  std::function<std::int64_t()> key_clock_s = unix_now_s;
};

}  // namespace privsearch::protocol
