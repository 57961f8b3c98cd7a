// The provider's bounded cache of uploaded evaluation-key sets, keyed by key id = SHA-256 of the
// serialized set (and of the public key when the provider floods).
//
// Bounded twice: by the number of sets and by bytes of memory, counting uploads still being
// decoded. An upload first reserves the memory its size can decode to
// (ckks::galois_keys_memory_bound), evicting least recently used sets to make room; when the
// reservations of uploads in progress alone fill the budget the upload is refused
// (kResourceExhausted) before any decoding. A set in use by a request when it is evicted lives
// until that request ends (shared ownership), so memory can exceed the bound by at most one set
// per request in flight. Request budgets are not kept here (protocol/budget_ledger.h): evicting
// a set never refills its budget.
// Thread safety: all members are safe to call concurrently (one mutex; key sets are shared
// read-only through shared_ptr, so evaluation never holds the lock).
#pragma once

#include <chrono>
#include <cstdint>
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
  std::int64_t expires_s = 0;  // Unix seconds; the key epoch ends (ProviderLimits::key_set_ttl_s)
};

class KeyCache {
 public:
  KeyCache(std::size_t max_sets, std::uint64_t max_bytes);

  // Memory held for one upload while it is decoded; returned to the cache when destroyed.
  class Reservation {
   public:
    Reservation(Reservation&& o) noexcept : cache_(o.cache_), bytes_(o.bytes_) {
      o.cache_ = nullptr;
    }
    Reservation& operator=(Reservation&&) = delete;
    Reservation(const Reservation&) = delete;
    ~Reservation();
    std::uint64_t bytes() const { return bytes_; }

   private:
    friend class KeyCache;
    Reservation(KeyCache* cache, std::uint64_t bytes) : cache_(cache), bytes_(bytes) {}
    KeyCache* cache_;
    std::uint64_t bytes_;
  };
  // Reserves `bytes` for an upload, evicting idle sets as needed. kResourceExhausted when the
  // uploads in progress leave no room (or one set alone exceeds the byte bound).
  Result<Reservation> reserve(std::uint64_t bytes);
  // Inserts (or refreshes) a decoded set of `bytes` bytes, consuming its reservation.
  void insert(const KeyId& id, std::shared_ptr<const EvaluationKeys> keys, std::uint64_t bytes,
              Reservation reservation);
  // The cached set; kNotFound when not (or no longer) cached.
  Result<std::shared_ptr<const EvaluationKeys>> find(const KeyId& id);

  // Gives back what a churn of key sets left (docs/SECURITY.md, memory given back): sets that no
  // request has used since their upload, `unused_for` after it, and, while the cache holds more
  // than `keep_bytes`, sets no request used for `idle_for` (least recently used first). A
  // legitimate client uses its set at once and keeps it; an attacker's uploads, never used, go
  // soon after the churn stops. Returns the number of sets evicted.
  std::size_t evict_idle(std::chrono::steady_clock::duration unused_for,
                         std::chrono::steady_clock::duration idle_for, std::uint64_t keep_bytes);

  std::size_t size() const;
  std::uint64_t cached_bytes() const;
  std::uint64_t reserved_bytes() const;

 private:
  void release(std::uint64_t bytes);
  void evict_until_locked(std::uint64_t room);

  const std::size_t max_sets_;
  const std::uint64_t max_bytes_;
  mutable std::mutex mu_;
  std::list<KeyId> lru_;  // front = most recent
  struct Entry {
    std::shared_ptr<const EvaluationKeys> keys;
    std::uint64_t bytes = 0;
    std::list<KeyId>::iterator pos;
    std::chrono::steady_clock::time_point last_used;  // upload or request
    bool used = false;                                // by a request since the upload
  };
  void erase_locked(std::map<KeyId, Entry>::iterator it);
  std::map<KeyId, Entry> entries_;
  std::uint64_t cached_bytes_ = 0, reserved_bytes_ = 0;
};

}  // namespace privsearch::protocol
