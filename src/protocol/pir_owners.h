// Which identity a PIR registration belongs to, so no other identity can use it.
//
// Why: a client id is public (the hash of the setup message, and it travels in every status and
// query). Without a binding, a second identity that replays a recorded query relabelled with a
// victim's client id is answered and burns the victim's ready hints (each index answers once),
// locking the victim out of private fetches. A registration made by an authenticated identity is
// bound to it: status and queries naming that client from any other caller get
// UNKNOWN_PIR_CLIENT, as for an id that was never registered (nothing says it exists).
// Anonymous registrations stay open: there is nothing to bind them to (a provider that
// requires tokens has none). Replicas sharing their PIR state (`shared`, Redis) also bind in
// the store, and a registration this process has no binding for is looked up there, so a
// balancer that sends the attacker to another replica finds the same owner. A store that
// cannot be read fails closed (the call is refused as for an unknown client). Bounded locally:
// at most `capacity` bindings, the oldest forgotten first; the capacity is far above any
// provider's registered clients (--pir-max-clients), so a binding outlives its registration.
// Thread safety: every member may be called concurrently.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>

#include "core/status.h"
#include "protocol/pir_shared_state.h"
#include "protocol/privsearch.pb.h"

namespace privsearch::protocol {

class PirOwners {
 public:
  explicit PirOwners(std::size_t capacity = 1u << 16) : capacity_(capacity) {}
  // Also bind in and consult `shared` (the payload database's PIR state of the replicas).
  void share(std::shared_ptr<PirSharedState> shared) { shared_ = std::move(shared); }

  // After a setup of `identity` (empty: anonymous, nothing bound) registered `client`.
  void bind(v1::PirDatabase database, std::uint64_t client, const std::string& identity);
  // Whether `identity` may use `client`'s registration: yes when it is bound to that identity
  // or not bound at all.
  bool allowed(v1::PirDatabase database, std::uint64_t client, const std::string& identity) const;
  // The same for a query message (its client id read from the framing); a message too short to
  // name one is left to the backend's own checks (true).
  bool allowed_query(v1::PirDatabase database, std::span<const std::uint8_t> query,
                     const std::string& identity) const;
  std::size_t size() const;

 private:
  using Key = std::pair<int, std::uint64_t>;
  const std::size_t capacity_;
  mutable std::mutex mu_;
  std::map<Key, std::string> owner_;
  std::deque<Key> order_;                   // bind order, for the bound
  std::shared_ptr<PirSharedState> shared_;  // payloads database only (the lists are not shared)
};

}  // namespace privsearch::protocol
