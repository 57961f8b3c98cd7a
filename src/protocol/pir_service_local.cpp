// PirService in its in-process mode: registrations, the fair choice of the next hint to
// precompute, idle expiry and eviction, and the low-priority hint worker. Shared mode is
// pir_service_shared.cpp; what both share is pir_service.cpp.
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "protocol/pir_service.h"

namespace privsearch::protocol {

bool PirService::pick_work_locked(std::uint64_t& client, std::uint64_t& index) {
  // Fewest ready hints first; among those, the owner served longest ago; ties in round-robin
  // order from the registration after the last one served.
  auto best = next_to_precompute_.end();
  std::size_t best_ready = config_.ready_per_client;
  std::uint64_t best_stamp = 0;
  auto stamp_of = [this](std::uint64_t id) {
    const auto owner = owner_of_.find(id);
    if (owner == owner_of_.end()) return std::uint64_t{0};
    const auto at = owner_served_at_.find(owner->second);
    return at == owner_served_at_.end() ? std::uint64_t{0} : at->second;
  };
  auto start = next_to_precompute_.upper_bound(last_served_);
  for (std::size_t pass = 0; pass < 2; ++pass) {
    auto from = pass == 0 ? start : next_to_precompute_.begin();
    auto to = pass == 0 ? next_to_precompute_.end() : start;
    for (auto it = from; it != to; ++it) {
      const std::size_t ready = server_->ready_indices(it->first).size();
      if (ready >= config_.ready_per_client) continue;
      const std::uint64_t stamp = stamp_of(it->first);
      if (best == next_to_precompute_.end() || ready < best_ready ||
          (ready == best_ready && stamp < best_stamp)) {
        best = it;
        best_ready = ready;
        best_stamp = stamp;
      }
    }
  }
  if (best == next_to_precompute_.end()) return false;
  client = best->first;
  index = best->second++;
  last_served_ = client;
  if (const auto owner = owner_of_.find(client); owner != owner_of_.end()) {
    owner_served_at_[owner->second] = ++service_stamp_;
  }
  return true;
}

void PirService::touch_locked(std::uint64_t client) { last_used_[client] = Clock::now(); }

void PirService::forget_locked(std::uint64_t client) {
  server_->unregister_client(client);
  next_to_precompute_.erase(client);
  setups_.erase(client);
  last_used_.erase(client);
  if (const auto owner = owner_of_.find(client); owner != owner_of_.end()) {
    const std::string who = owner->second;
    owner_of_.erase(owner);
    const bool more = std::any_of(owner_of_.begin(), owner_of_.end(),
                                  [&](const auto& entry) { return entry.second == who; });
    if (!more) owner_served_at_.erase(who);
  }
  if (retired_.insert(client).second) {
    retired_order_.push_back(client);
    constexpr std::size_t kRetiredMemory = 1 << 16;
    while (retired_order_.size() > kRetiredMemory) {
      retired_.erase(retired_order_.front());
      retired_order_.pop_front();
    }
  }
}

void PirService::expire_idle_locked() {
  const auto cutoff = Clock::now() - std::chrono::seconds(config_.idle_expiry_s);
  std::vector<std::uint64_t> idle;
  for (const auto& [id, t] : last_used_) {
    if (t < cutoff) idle.push_back(id);
  }
  for (const auto id : idle) forget_locked(id);
}

bool PirService::evict_one_idle_locked() {
  const auto cutoff = Clock::now() - std::chrono::seconds(config_.evict_idle_after_s);
  auto oldest = last_used_.end();
  for (auto it = last_used_.begin(); it != last_used_.end(); ++it) {
    if (it->second <= cutoff && (oldest == last_used_.end() || it->second < oldest->second)) {
      oldest = it;
    }
  }
  if (oldest == last_used_.end()) return false;
  forget_locked(oldest->first);
  return true;
}

void PirService::worker_loop() {
  // Lowest priority for this thread only (Linux applies setpriority to a thread id).
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
  for (;;) {
    std::uint64_t client = 0, index = 0;
    std::shared_ptr<pir::ZipPirServer> server;
    {
      std::unique_lock lock(mu_);
      bool found = false;
      cv_.wait(lock, [&] {
        if (stop_) return true;
        found = pick_work_locked(client, index);
        return found;
      });
      if (stop_) return;
      if (!found) continue;
      server = server_;
    }
    // One query's hint; failures (a client that left) are not fatal to the worker.
    const auto t0 = std::chrono::steady_clock::now();
    timespec c0{}, c1{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    const Status s = server->precompute(client, index, 1, 1, &cancel_);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    if (s.ok()) {
      std::lock_guard lock(mu_);
      last_offline_s_ =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      last_offline_cpu_s_ = static_cast<double>(c1.tv_sec - c0.tv_sec) +
                            1e-9 * static_cast<double>(c1.tv_nsec - c0.tv_nsec);
    }
    cv_.notify_all();
  }
}

}  // namespace privsearch::protocol
