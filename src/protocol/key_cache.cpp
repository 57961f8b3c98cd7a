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

void KeyCache::evict_until_locked(std::uint64_t room) {
  while (!lru_.empty() && cached_bytes_ + reserved_bytes_ + room > max_bytes_) {
    const auto it = entries_.find(lru_.back());
    cached_bytes_ -= it->second.bytes;
    entries_.erase(it);
    lru_.pop_back();
  }
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
    return;
  }
  evict_until_locked(bytes);
  lru_.push_front(id);
  entries_.emplace(id, Entry{std::move(keys), bytes, lru_.begin()});
  cached_bytes_ += bytes;
  while (entries_.size() > max_sets_) {
    const auto it = entries_.find(lru_.back());
    cached_bytes_ -= it->second.bytes;
    entries_.erase(it);
    lru_.pop_back();
  }
}

Result<std::shared_ptr<const EvaluationKeys>> KeyCache::find(const KeyId& id) {
  std::lock_guard lock(mu_);
  const auto it = entries_.find(id);
  if (it == entries_.end()) {
    return Status(StatusCode::kNotFound, "unknown key id: upload the key set again");
  }
  lru_.splice(lru_.begin(), lru_, it->second.pos);
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
