// ZipPIR registrations and precomputed hints shared by every provider replica (the scale-out state
// tier), so that a client registered through one replica can fetch through any other, each
// query index is answered at most once cluster-wide, and the offline hint work is done once.
//
// Why "at most once" matters: the offsets of query index i are expanded from the client's seed
// and i, so any replica can compute the index's hint, and two queries answered under one index
// would reveal the difference of the client's two LWE queries, i.e. which records it asked for
// (ZipPIR, arXiv 2603.09190, section 4). So:
//  - indices are handed out by one counter per client (INCR), never reset while the client can
//    come back (`index_memory_s`, default 30 days, longer than any registration lives), so no
//    index's hint is ever computed twice, on any replica or after a re-registration;
//  - a hint lives in the store until a replica takes it, and taking it is one atomic HGET+HDEL
//    (a script): of two replicas asked for the same index exactly one gets it.
// The work queue: a registration, a status call and every answered query top the client up to
// `ready_per_client` hints ready or pending, by pushing its id on a list; every replica's
// worker pops (BLPOP), claims the next index, computes the hint and delivers it. A client with
// none ready or pending goes on a first list that workers drain before the other (a new
// client's first hint waits for the first hints of earlier clients, never for their refills).
// A worker killed mid-hint leaves its claim counted as pending until `pending_ttl_s` passes;
// the index it claimed is simply never used.
// Redis layout (one primary; the per-client keys share the hash tag {client id}):
//   privsearch:pir:a-seed                   the LWE matrix seed every replica uses (SET NX)
//   privsearch:pir:clients                  ZSET client id -> last use (cap and idle expiry)
//   privsearch:pir:{c}:setup                the setup message (TTL idle_expiry_s, refreshed)
//   privsearch:pir:{c}:next                 next query index to compute (TTL index_memory_s)
//   privsearch:pir:{c}:hints:<version>      HASH query index -> hint (TTL idle_expiry_s)
//   privsearch:pir:{c}:pending:<version>    hints queued or being computed (TTL pending_ttl_s)
//   privsearch:pir:work-first:<version>, privsearch:pir:work:<version>   the work lists
//                                           (TTL pending_ttl_s, refreshed by every push)
// Everything read from the store is checked by its user (setups hash to their client id, hints
// are parsed against the database's parameters): a damaged value is a typed refusal.
// Thread safety: all members may be called concurrently.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace privsearch::protocol {

struct PirSharedLimits {
  // The clock registrations idle by, in the in-process store (tests advance it instead of
  // sleeping out an expiry; empty: steady_clock). Redis keeps its own time.
  std::function<std::chrono::steady_clock::time_point()> clock;
  std::size_t ready_per_client = 2;
  std::size_t max_clients = 256;
  int idle_expiry_s = 3600;
  int evict_idle_after_s = 60;
  int pending_ttl_s = 900;
  std::int64_t index_memory_s = 30 * 86400;
};

class PirSharedState {
 public:
  virtual ~PirSharedState() = default;

  // The LWE matrix seed of the cluster: `proposal` when none is stored yet, else the stored one.
  virtual Result<std::string> a_seed(const std::string& proposal) = 0;
  // Registers (or refreshes) a client and tops up its hints. kResourceExhausted when
  // `max_clients` are registered and none has been idle for `evict_idle_after_s`. `owner`
  // (Caller::rate_key) is whom the hint work is scheduled fairly between (the memory store;
  // Redis schedules first hints first, pir_shared_state.cpp).
  virtual Status register_client(std::uint64_t client, const std::string& setup,
                                 const std::string& version, const std::string& owner) = 0;
  // The registered clients (for waits and counts; not on any request's path).
  virtual Result<std::vector<std::uint64_t>> clients() = 0;
  // The client's setup message (refreshing its registration); nullopt when not registered.
  virtual Result<std::optional<std::string>> setup_of(std::uint64_t client) = 0;
  // Query indices with a hint ready for `version`, after topping the client up; nullopt when
  // the client is not registered.
  virtual Result<std::optional<std::vector<std::uint64_t>>> ready(std::uint64_t client,
                                                                  const std::string& version) = 0;
  // Takes (removes) the hint of one index, exactly once cluster-wide. kNotFound: the client is
  // not registered; kFailedPrecondition: no hint for that index (not ready, or already used).
  virtual Result<std::string> take_hint(std::uint64_t client, const std::string& version,
                                        std::uint64_t index) = 0;

  // Worker side. Waits up to `wait_s` for work: the client, the index claimed for it and the
  // client's setup; nullopt when there was none.
  struct Work {
    std::uint64_t client = 0, index = 0;
    std::string setup;
  };
  virtual Result<std::optional<Work>> next_work(const std::string& version, int wait_s) = 0;
  virtual Status deliver(const Work& work, const std::string& version, const std::string& hint) = 0;
  // The claimed work could not be done (the hint failed): it no longer counts as pending.
  virtual Status abandon(const Work& work, const std::string& version) = 0;
  // Wakes every next_work waiting now and makes later ones return at once (the service stops).
  virtual void interrupt() {}

  // The identity a registration belongs to, cluster-wide (protocol/pir_owners.h): bind sets it
  // once (a later bind by another identity does not move it) and keeps it as long as the
  // registration can live; owner_of is nullopt when unbound.
  virtual Status bind_owner(std::uint64_t client, const std::string& identity) = 0;
  virtual Result<std::optional<std::string>> owner_of(std::uint64_t client) = 0;

  virtual std::string where() const = 0;
};

// The Redis implementation (`url` as for the budget ledger). kUnavailable when Redis cannot be
// reached now.
Result<std::unique_ptr<PirSharedState>> open_redis_pir_state(const std::string& url,
                                                             PirSharedLimits limits);

}  // namespace privsearch::protocol
