#include "protocol/pir_memory_state.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>

namespace privsearch::protocol {
namespace {

using Clock = std::chrono::steady_clock;

class MemoryPirState final : public PirSharedState {
 public:
  explicit MemoryPirState(PirSharedLimits limits) : limits_(limits) {}

  Result<std::string> a_seed(const std::string& proposal) override {
    std::lock_guard lock(mu_);
    if (seed_.empty()) seed_ = proposal;
    return seed_;
  }

  Status register_client(std::uint64_t client, const std::string& setup, const std::string& version,
                         const std::string& owner) override {
    std::unique_lock lock(mu_);
    expire_idle_locked();
    if (retired_.count(client) != 0) {
      return Status(StatusCode::kNotFound,
                    "this PIR registration expired; set up again with a new key");
    }
    if (registrations_.count(client) == 0 && registrations_.size() >= limits_.max_clients &&
        !evict_one_idle_locked()) {
      return Status(StatusCode::kResourceExhausted,
                    fmt::format("{} PIR clients are registered and none has been idle for {} s; "
                                "retry later",
                                limits_.max_clients, limits_.evict_idle_after_s));
    }
    auto& r = registrations_[client];
    if (r.setup.empty()) {
      r.setup = setup;
      r.owner = owner;
    }
    r.last_used = now();
    switch_version_locked(version);
    lock.unlock();
    cv_.notify_all();
    return Status();
  }

  Result<std::optional<std::string>> setup_of(std::uint64_t client) override {
    std::lock_guard lock(mu_);
    const auto it = registrations_.find(client);
    if (it == registrations_.end()) return std::optional<std::string>();
    it->second.last_used = now();
    return std::optional<std::string>(it->second.setup);
  }

  Result<std::optional<std::vector<std::uint64_t>>> ready(std::uint64_t client,
                                                          const std::string& version) override {
    std::unique_lock lock(mu_);
    expire_idle_locked();
    switch_version_locked(version);
    const auto it = registrations_.find(client);
    if (it == registrations_.end()) return std::optional<std::vector<std::uint64_t>>();
    it->second.last_used = now();
    std::vector<std::uint64_t> out;
    for (const auto& [index, hint] : it->second.hints) out.push_back(index);
    lock.unlock();
    cv_.notify_all();  // topped up by the workers when below ready_per_client
    return std::optional<std::vector<std::uint64_t>>(std::move(out));
  }

  Result<std::string> take_hint(std::uint64_t client, const std::string& version,
                                std::uint64_t index) override {
    std::unique_lock lock(mu_);
    switch_version_locked(version);
    const auto it = registrations_.find(client);
    if (it == registrations_.end()) return Status(StatusCode::kNotFound, "unknown PIR client");
    auto& hints = it->second.hints;
    const auto hint = hints.find(index);
    if (hint == hints.end()) {
      return Status(StatusCode::kFailedPrecondition,
                    fmt::format("no precomputed hint for query index {} of this client (not "
                                "ready, or already used)",
                                index));
    }
    std::string out = std::move(hint->second);
    // A client's indices only move forward: lower ones could never be used.
    hints.erase(hints.begin(), std::next(hint));
    it->second.last_used = now();
    lock.unlock();
    cv_.notify_all();  // one hint fewer: the workers refill
    return out;
  }

  Result<std::optional<Work>> next_work(const std::string& version, int wait_s) override {
    std::unique_lock lock(mu_);
    switch_version_locked(version);
    std::optional<Work> work;
    cv_.wait_for(lock, std::chrono::seconds(wait_s), [&] {
      if (interrupted_ || version_ != version) return true;
      work = claim_locked();
      return work.has_value();
    });
    return work;
  }

  Status deliver(const Work& work, const std::string& version, const std::string& hint) override {
    {
      std::lock_guard lock(mu_);
      const auto it = release_locked(work, version);
      if (it != registrations_.end()) it->second.hints.emplace(work.index, hint);
    }
    cv_.notify_all();
    return Status();
  }

  Status abandon(const Work& work, const std::string& version) override {
    {
      std::lock_guard lock(mu_);
      release_locked(work, version);
    }
    cv_.notify_all();
    return Status();
  }

  Status bind_owner(std::uint64_t client, const std::string& identity) override {
    std::lock_guard lock(mu_);
    bound_.try_emplace(client, identity);
    return Status();
  }

  Result<std::optional<std::string>> owner_of(std::uint64_t client) override {
    std::lock_guard lock(mu_);
    const auto it = bound_.find(client);
    if (it == bound_.end()) return std::optional<std::string>();
    return std::optional<std::string>(it->second);
  }

  Result<std::vector<std::uint64_t>> clients() override {
    std::lock_guard lock(mu_);
    std::vector<std::uint64_t> out;
    for (const auto& [id, r] : registrations_) out.push_back(id);
    return out;
  }

  void interrupt() override {
    {
      std::lock_guard lock(mu_);
      interrupted_ = true;
    }
    cv_.notify_all();
  }

  std::string where() const override { return "this process"; }

 private:
  struct Registration {
    std::string setup, owner;
    Clock::time_point last_used;
    std::map<std::uint64_t, std::string> hints;  // query index -> hint, of version_
    std::size_t pending = 0;                     // claimed for version_, not yet delivered
  };
  using Registrations = std::map<std::uint64_t, Registration>;

  // Hints are for one version: a newer one drops the others' (and their pending work).
  void switch_version_locked(const std::string& version) {
    if (version == version_) return;
    version_ = version;
    for (auto& [id, r] : registrations_) {
      r.hints.clear();
      r.pending = 0;
    }
  }

  // The registration whose claimed `work` ended, or end() when it is gone or for another
  // version (its pending count was reset with the version).
  Registrations::iterator release_locked(const Work& work, const std::string& version) {
    const auto it = registrations_.find(work.client);
    if (it == registrations_.end() || version != version_) return registrations_.end();
    if (it->second.pending > 0) --it->second.pending;
    return it;
  }

  std::optional<Work> claim_locked();
  void forget_locked(std::uint64_t client);
  void expire_idle_locked();
  bool evict_one_idle_locked();

  Clock::time_point now() const { return limits_.clock ? limits_.clock() : Clock::now(); }

  const PirSharedLimits limits_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string seed_, version_;
  Registrations registrations_;
  std::map<std::uint64_t, std::uint64_t> next_index_;  // never reset while the process lives
  std::map<std::uint64_t, std::string> bound_;         // client -> identity (PirOwners)
  std::map<std::string, std::uint64_t> owner_served_at_;
  std::uint64_t service_stamp_ = 0, last_served_ = 0;
  std::set<std::uint64_t> retired_;
  std::deque<std::uint64_t> retired_order_;
  bool interrupted_ = false;
};

// Fewest hints ready or pending first; among those, the owner served longest ago; ties in
// round-robin order from the registration after the last one served.
std::optional<PirSharedState::Work> MemoryPirState::claim_locked() {
  auto best = registrations_.end();
  std::size_t best_load = limits_.ready_per_client;
  std::uint64_t best_stamp = 0;
  auto stamp_of = [this](const Registration& r) {
    const auto at = owner_served_at_.find(r.owner);
    return at == owner_served_at_.end() ? std::uint64_t{0} : at->second;
  };
  const auto start = registrations_.upper_bound(last_served_);
  for (int pass = 0; pass < 2; ++pass) {
    const auto from = pass == 0 ? start : registrations_.begin();
    const auto to = pass == 0 ? registrations_.end() : start;
    for (auto it = from; it != to; ++it) {
      const std::size_t load = it->second.hints.size() + it->second.pending;
      if (load >= limits_.ready_per_client) continue;
      const std::uint64_t stamp = stamp_of(it->second);
      if (best == registrations_.end() || load < best_load ||
          (load == best_load && stamp < best_stamp)) {
        best = it;
        best_load = load;
        best_stamp = stamp;
      }
    }
  }
  if (best == registrations_.end()) return std::nullopt;
  last_served_ = best->first;
  owner_served_at_[best->second.owner] = ++service_stamp_;
  ++best->second.pending;
  return Work{best->first, next_index_[best->first]++, best->second.setup};
}

void MemoryPirState::forget_locked(std::uint64_t client) {
  const auto it = registrations_.find(client);
  if (it == registrations_.end()) return;
  const std::string owner = it->second.owner;
  registrations_.erase(it);
  const bool more = std::any_of(registrations_.begin(), registrations_.end(),
                                [&](const auto& entry) { return entry.second.owner == owner; });
  if (!more) owner_served_at_.erase(owner);
  next_index_.erase(client);  // safe: the id is retired, so the counter is never needed again
  if (retired_.insert(client).second) {
    retired_order_.push_back(client);
    constexpr std::size_t kRetiredMemory = 1 << 16;
    while (retired_order_.size() > kRetiredMemory) {
      retired_.erase(retired_order_.front());
      retired_order_.pop_front();
    }
  }
}

void MemoryPirState::expire_idle_locked() {
  const auto cutoff = now() - std::chrono::seconds(limits_.idle_expiry_s);
  std::vector<std::uint64_t> idle;
  for (const auto& [id, r] : registrations_) {
    if (r.last_used < cutoff) idle.push_back(id);
  }
  for (const auto id : idle) forget_locked(id);
}

bool MemoryPirState::evict_one_idle_locked() {
  const auto cutoff = now() - std::chrono::seconds(limits_.evict_idle_after_s);
  auto oldest = registrations_.end();
  for (auto it = registrations_.begin(); it != registrations_.end(); ++it) {
    if (it->second.last_used <= cutoff &&
        (oldest == registrations_.end() || it->second.last_used < oldest->second.last_used)) {
      oldest = it;
    }
  }
  if (oldest == registrations_.end()) return false;
  forget_locked(oldest->first);
  return true;
}

}  // namespace

std::unique_ptr<PirSharedState> make_memory_pir_state(PirSharedLimits limits) {
  return std::make_unique<MemoryPirState>(limits);
}

}  // namespace privsearch::protocol
