// Request budgets in Redis: the ledger every provider replica shares (the scale-out state tier).
//
// One Lua script per request charges all its accounts atomically on the Redis server (EVAL:
// Redis caches the compiled script by its SHA-1): it refuses when any account has reached its limit
// and otherwise INCRs each and sets its expiry, so two replicas can never both take the last
// request (no read-modify-write across the network). Keys are
// `privsearch:budget:{<group>}:<account>` (the group is a Redis Cluster hash tag: one request's
// accounts share a slot).
// Durability is Redis's: run it with `appendonly yes`; `appendfsync everysec` (Redis's default
// for AOF) can lose up to one second of charges in a crash of the Redis host, `always` none at a
// throughput cost (docs/SECURITY.md). Fail closed: an unreachable or erroring Redis makes every
// charge kUnavailable (the provider answers STATE_UNAVAILABLE); the connection is re-made on the
// next call. hiredis 0.14 (Debian 12) has no TLS: reach Redis on loopback, a unix socket or a
// TLS tunnel; AUTH by password is supported.
// Thread safety: all members may be called concurrently (one connection behind a mutex).
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "protocol/budget_ledger.h"

namespace privsearch::protocol {

// `url`: redis://[[USER]:PASSWORD@]HOST:PORT[/DB] or unix:///PATH[?db=N]. kInvalidArgument for a
// malformed URL, kUnavailable when Redis cannot be reached or refuses AUTH/SELECT.
Result<std::unique_ptr<BudgetLedger>> open_redis_ledger(const std::string& url,
                                                        int timeout_ms = 500);

}  // namespace privsearch::protocol
