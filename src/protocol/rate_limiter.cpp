#include "protocol/rate_limiter.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>

namespace privsearch::protocol {

std::string address_group(const std::string& address) {
  std::array<std::uint8_t, 16> a{};
  if (::inet_pton(AF_INET6, address.c_str(), a.data()) != 1) return address;
  char text[INET6_ADDRSTRLEN] = {};
  const bool mapped = std::all_of(a.begin(), a.begin() + 10, [](auto b) { return b == 0; }) &&
                      a[10] == 0xff && a[11] == 0xff;
  if (mapped) {
    ::inet_ntop(AF_INET, a.data() + 12, text, sizeof(text));
    return text;
  }
  std::fill(a.begin() + 8, a.end(), std::uint8_t{0});
  ::inet_ntop(AF_INET6, a.data(), text, sizeof(text));
  return std::string(text) + "/64";
}

RateLimiter::RateLimiter(RateLimit limit, std::size_t max_clients)
    : limit_{limit.per_minute, std::max(1.0, limit.burst)},
      max_clients_(std::max<std::size_t>(1, max_clients)) {}

double RateLimiter::take(const std::string& client, double tokens) {
  const double now =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  return take_at(client, now, tokens);
}

double RateLimiter::take_at(const std::string& client, double now_s, double tokens) {
  if (limit_.per_minute <= 0) return 0;
  if (tokens > limit_.burst) return std::numeric_limits<double>::infinity();
  const double rate = limit_.per_minute / 60.0;  // tokens per second
  std::lock_guard lock(mu_);
  auto [it, fresh] = buckets_.try_emplace(client, Bucket{limit_.burst, now_s});
  Bucket& b = it->second;
  b.tokens = std::min(limit_.burst, b.tokens + (now_s - b.updated_s) * rate);
  b.updated_s = now_s;
  if (b.tokens < tokens) return (tokens - b.tokens) / rate;
  b.tokens -= tokens;
  if (fresh && buckets_.size() > max_clients_) {
    // Drop the buckets that have refilled completely: they are indistinguishable from new ones.
    std::erase_if(buckets_, [&](const auto& kv) {
      return kv.first != client &&
             kv.second.tokens + (now_s - kv.second.updated_s) * rate >= limit_.burst;
    });
    // Still too many (all recently active): drop the least recently updated one.
    while (buckets_.size() > max_clients_) {
      auto oldest = std::min_element(buckets_.begin(), buckets_.end(), [](auto& x, auto& y) {
        return x.second.updated_s < y.second.updated_s;
      });
      if (oldest->first == client) break;
      buckets_.erase(oldest);
    }
  }
  return 0;
}

}  // namespace privsearch::protocol
