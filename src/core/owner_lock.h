// One owner at a time for objects that hold secrets, masks, one-time offsets or a CSPRNG.
//
// Why: such state must never be used by two threads at once. Two concurrent ZipPIR queries
// under one query index reuse its one-time offsets (the provider subtracts the two queries and
// learns both records); two access-private searches that pop one LWE mask leak the difference
// of their queries. A comment saying "one per thread" is not enough: Python releases the GIL,
// so users call one client from many threads. Every public method of such an object that reads
// or consumes that state holds the object's OwnerLock for the whole call, so concurrent callers
// are serialized in code, whatever the binding does.
// The mutex is recursive (a public method may call another of the same object) and lives on the
// heap so the objects holding one stay movable; a moved-from OwnerLock must not be held (the
// objects are not used after a move).
#pragma once

#include <memory>
#include <mutex>

namespace privsearch {

class OwnerLock {
 public:
  OwnerLock() : mu_(std::make_unique<std::recursive_mutex>()) {}
  OwnerLock(OwnerLock&&) noexcept = default;
  OwnerLock& operator=(OwnerLock&&) noexcept = default;
  OwnerLock(const OwnerLock&) = delete;
  OwnerLock& operator=(const OwnerLock&) = delete;

  // Held until the returned guard goes out of scope.
  [[nodiscard]] std::unique_lock<std::recursive_mutex> hold() const {
    return std::unique_lock<std::recursive_mutex>(*mu_);
  }

 private:
  std::unique_ptr<std::recursive_mutex> mu_;
};

}  // namespace privsearch
