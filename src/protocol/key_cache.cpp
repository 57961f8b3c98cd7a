#include "protocol/key_cache.h"

#include <fmt/format.h>

#include <utility>

namespace privsearch::protocol {

KeyCache::KeyCache(std::size_t max_sets, std::uint64_t max_bytes)
    : max_sets_(max_sets == 0 ? 1 : max_sets), max_bytes_(max_bytes) {}

KeyCache::Reservation::~Reservation() {
  if (cache_ != nullptr) cache_->release(bytes_);
}

void KeyCache::release(std::uint64_t bytes) {
  std::lock_guard lock(mu_);
  reserved_bytes_ -= bytes;
}

void KeyCache::erase_locked(std::map<KeyId, Entry>::iterator it) {
  cached_bytes_ -= it->second.bytes;
  lru_.erase(it->second.pos);
  entries_.erase(it);
}

void KeyCache::evict_until_locked(std::uint64_t room) {
  while (!lru_.empty() && cached_bytes_ + reserved_bytes_ + room > max_bytes_) {
    erase_locked(entries_.find(lru_.back()));
  }
}

std::size_t KeyCache::evict_idle(std::chrono::steady_clock::duration unused_for,
                                 std::chrono::steady_clock::duration idle_for,
                                 std::uint64_t keep_bytes) {
  std::lock_guard lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  std::size_t evicted = 0;
  for (auto it = entries_.begin(); it != entries_.end();) {
    const auto next = std::next(it);
    if (!it->second.used && now - it->second.last_used >= unused_for) {
      erase_locked(it);
      ++evicted;
    }
    it = next;
  }
  while (!lru_.empty() && cached_bytes_ > keep_bytes) {
    const auto it = entries_.find(lru_.back());
    if (now - it->second.last_used < idle_for) break;  // the rest were used more recently
    erase_locked(it);
    ++evicted;
  }
  return evicted;
}

Result<KeyCache::Reservation> KeyCache::reserve(std::uint64_t bytes) {
  std::lock_guard lock(mu_);
  if (bytes > max_bytes_) {
    return Status(StatusCode::kResourceExhausted,
                  fmt::format("a key set of this size needs {} MB of memory; the provider's key "
                              "cache holds {} MB",
                              bytes >> 20, max_bytes_ >> 20));
  }
  evict_until_locked(bytes);
  if (cached_bytes_ + reserved_bytes_ + bytes > max_bytes_) {
    return Status(StatusCode::kResourceExhausted,
                  fmt::format("key uploads in progress fill the key cache ({} of {} MB); retry "
                              "later",
                              reserved_bytes_ >> 20, max_bytes_ >> 20));
  }
  reserved_bytes_ += bytes;
  return Reservation(this, bytes);
}

void KeyCache::insert(const KeyId& id, std::shared_ptr<const EvaluationKeys> keys,
                      std::uint64_t bytes, Reservation reservation) {
  std::lock_guard lock(mu_);
  // The reservation becomes the entry's bytes (released below without re-locking).
  reserved_bytes_ -= reservation.bytes_;
  reservation.cache_ = nullptr;
  if (auto it = entries_.find(id); it != entries_.end()) {
    // The same id again (a re-upload, or a pull after expiry): the newer copy replaces the old,
    // so its expiry is the one that counts.
    lru_.splice(lru_.begin(), lru_, it->second.pos);
    cached_bytes_ = cached_bytes_ - it->second.bytes + bytes;
    it->second.keys = std::move(keys);
    it->second.bytes = bytes;
    it->second.last_used = std::chrono::steady_clock::now();
    return;
  }
  evict_until_locked(bytes);
  lru_.push_front(id);
  entries_.emplace(
      id, Entry{std::move(keys), bytes, lru_.begin(), std::chrono::steady_clock::now(), false});
  cached_bytes_ += bytes;
  while (entries_.size() > max_sets_) erase_locked(entries_.find(lru_.back()));
}

Result<std::shared_ptr<const EvaluationKeys>> KeyCache::find(const KeyId& id) {
  std::lock_guard lock(mu_);
  const auto it = entries_.find(id);
  if (it == entries_.end()) {
    return Status(StatusCode::kNotFound, "unknown key id: upload the key set again");
  }
  lru_.splice(lru_.begin(), lru_, it->second.pos);
  it->second.last_used = std::chrono::steady_clock::now();
  it->second.used = true;
  return it->second.keys;
}

std::size_t KeyCache::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

std::uint64_t KeyCache::cached_bytes() const {
  std::lock_guard lock(mu_);
  return cached_bytes_;
}

std::uint64_t KeyCache::reserved_bytes() const {
  std::lock_guard lock(mu_);
  return reserved_bytes_;
}

}  // namespace privsearch::protocol
