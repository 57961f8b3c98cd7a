// The provider's bounded cache of uploaded evaluation-key sets, keyed by key id = SHA-256 of the
// serialized set, with a per-key-id request budget.
//
// Why a budget: with the scores of chosen queries against chosen candidate IDs a client can
// learn the provider's exact vectors (the score-oracle extraction of the search paper, section
// 4.3); a finite number of requests per key epoch bounds what one epoch can extract. Spent
// counts outlive eviction (re-uploading the same set does not refill its budget); they are kept
// for up to `budget_memory` key ids, oldest forgotten first.
// Thread safety: all members are safe to call concurrently (one mutex; key sets are shared
// read-only through shared_ptr, so evaluation never holds the lock).
#pragma once

#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>

#include <optional>

#include "ckks/galois_keys.h"
#include "ckks/public_key.h"
#include "core/sha256.h"
#include "core/status.h"

namespace privsearch::protocol {

using KeyId = Sha256Digest;

// One upload: the rotation keys and, for a provider that re-randomizes its responses, the
// client's public key (ckks/rerandomize.h).
struct EvaluationKeys {
  ckks::GaloisKeys galois;
  std::optional<ckks::PublicKey> public_key;
};

class KeyCache {
 public:
  KeyCache(std::size_t capacity, std::uint64_t requests_per_key_id,
           std::size_t budget_memory = 65536);

  // Inserts (or refreshes) a key set; evicts the least recently used set beyond capacity.
  // Returns the requests the id may still make.
  std::uint64_t insert(const KeyId& id, std::shared_ptr<const EvaluationKeys> keys);

  struct Lease {
    std::shared_ptr<const EvaluationKeys> keys;
    std::uint64_t remaining = 0;  // after this request
  };
  // Charges one request to `id`. kNotFound: not cached; kResourceExhausted: budget used up.
  Result<Lease> acquire(const KeyId& id);

  std::size_t size() const;

 private:
  std::uint64_t remaining_locked(const KeyId& id) const;

  const std::size_t capacity_;
  const std::uint64_t budget_;
  const std::size_t budget_memory_;
  mutable std::mutex mu_;
  std::list<KeyId> lru_;  // front = most recent
  struct Entry {
    std::shared_ptr<const EvaluationKeys> keys;
    std::list<KeyId>::iterator pos;
  };
  std::map<KeyId, Entry> entries_;
  std::map<KeyId, std::uint64_t> spent_;
  std::deque<KeyId> spent_order_;
};

}  // namespace privsearch::protocol
