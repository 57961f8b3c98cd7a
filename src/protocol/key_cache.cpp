#include "protocol/key_cache.h"

#include <utility>

namespace privsearch::protocol {

KeyCache::KeyCache(std::size_t capacity, std::uint64_t requests_per_key_id,
                   std::size_t budget_memory)
    : capacity_(capacity == 0 ? 1 : capacity),
      budget_(requests_per_key_id),
      budget_memory_(budget_memory < capacity_ ? capacity_ : budget_memory) {}

std::uint64_t KeyCache::remaining_locked(const KeyId& id) const {
  const auto it = spent_.find(id);
  const std::uint64_t spent = it == spent_.end() ? 0 : it->second;
  return spent >= budget_ ? 0 : budget_ - spent;
}

std::uint64_t KeyCache::insert(const KeyId& id, std::shared_ptr<const EvaluationKeys> keys) {
  std::lock_guard lock(mu_);
  if (auto it = entries_.find(id); it != entries_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second.pos);
    return remaining_locked(id);
  }
  lru_.push_front(id);
  entries_.emplace(id, Entry{std::move(keys), lru_.begin()});
  while (entries_.size() > capacity_) {
    entries_.erase(lru_.back());
    lru_.pop_back();
  }
  return remaining_locked(id);
}

Result<KeyCache::Lease> KeyCache::acquire(const KeyId& id) {
  std::lock_guard lock(mu_);
  const auto it = entries_.find(id);
  if (it == entries_.end()) {
    return Status(StatusCode::kNotFound, "unknown key id: upload the key set again");
  }
  auto [sit, fresh] = spent_.try_emplace(id, 0);
  if (fresh) {
    spent_order_.push_back(id);
    while (spent_order_.size() > budget_memory_) {
      // Forget the oldest id that is not cached (a cached id keeps its count).
      const KeyId old = spent_order_.front();
      spent_order_.pop_front();
      if (entries_.count(old) != 0) {
        spent_order_.push_back(old);
        continue;
      }
      spent_.erase(old);
    }
  }
  if (sit->second >= budget_) {
    return Status(StatusCode::kResourceExhausted,
                  "request budget of this key id is exhausted: start a new key epoch");
  }
  ++sit->second;
  lru_.splice(lru_.begin(), lru_, it->second.pos);
  return Lease{it->second.keys, budget_ - sit->second};
}

std::size_t KeyCache::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

}  // namespace privsearch::protocol
