// Admission of the provider's calls (server/provider_service.h): a call's place among the
// requests in flight, its client's share of the workers, and the worker pool itself. Internal to
// src/server.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace privsearch::server::detail {

// Requests in flight per client (its identity, else its peer address): one client may hold at
// most `limit` of the workers, so its flood queues behind itself instead of in front of everyone
// (a K = 1024 rerank holds a worker ~10x longer than a K = 100 one). 0: no limit.
class PerClientSlots {
 public:
  explicit PerClientSlots(unsigned limit) : limit_(limit) {}
  class Slot {
   public:
    Slot(PerClientSlots* owner, std::string client) : owner_(owner), client_(std::move(client)) {}
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    Slot& operator=(Slot&&) = delete;
    ~Slot() {
      if (owner_ != nullptr) owner_->release(client_);
    }

   private:
    PerClientSlots* owner_;
    std::string client_;
  };
  // Fills `slot` with one of `client`'s slots; false when it holds all of its share.
  bool take(const std::string& client, std::optional<Slot>& slot) {
    if (limit_ == 0) {
      slot.emplace(nullptr, client);
      return true;
    }
    std::lock_guard lock(mu_);
    unsigned& n = in_flight_[client];
    if (n >= limit_) return false;
    ++n;
    slot.emplace(this, client);
    return true;
  }
  unsigned limit() const { return limit_; }

 private:
  void release(const std::string& client) {
    std::lock_guard lock(mu_);
    const auto it = in_flight_.find(client);
    if (it != in_flight_.end() && --it->second == 0) in_flight_.erase(it);
  }
  const unsigned limit_;
  std::mutex mu_;
  std::map<std::string, unsigned> in_flight_;
};

// The worker threads' share of the CPU: at most `threads` requests compute at once (kernel
// evaluation, key decoding, PIR answers); the others wait here, up to the in-flight limit, then
// OVERLOADED. Without it the sync server runs every admitted request on its own thread, so
// --threads would not bound the cores a provider takes (a replica meant to use one core used
// both) and concurrent kernels would only lengthen each other's latency.
class Workers {
 public:
  explicit Workers(unsigned threads) : free_(std::max(1u, threads)) {}
  class Slot {
   public:
    explicit Slot(Workers& w) : w_(w) { w_.acquire(); }
    ~Slot() { w_.release(); }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;

   private:
    Workers& w_;
  };

 private:
  void acquire() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return free_ > 0; });
    --free_;
  }
  void release() {
    {
      std::lock_guard lock(mu_);
      ++free_;
    }
    cv_.notify_one();
  }
  std::mutex mu_;
  std::condition_variable cv_;
  unsigned free_;
};

// A call's place among the requests in flight: `count` includes it.
struct InFlight {
  explicit InFlight(std::atomic<unsigned>& c) : counter(c), count(++c) {}
  ~InFlight() { --counter; }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;
  std::atomic<unsigned>& counter;
  unsigned count;
};

}  // namespace privsearch::server::detail
