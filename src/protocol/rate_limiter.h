// Per-client rate limits (token buckets) for the provider's expensive entry points: key uploads
// (each deserializes megabytes) and PIR setups (each queues minutes of hint work).
//
// A bucket per client key (its identity when authenticated, else its peer address) holds up to
// `burst` tokens and refills at `per_minute` / 60 tokens a second; a call takes one token or is
// refused with the seconds until one is back. Buckets of idle clients are full and carry no
// information, so they are dropped when the map exceeds `max_clients` (memory stays bounded
// whatever the number of addresses an attacker uses).
// Thread safety: all members may be called concurrently.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>

namespace privsearch::protocol {

// The address a per-address limit counts: an IPv4 address as it is (an IPv4-mapped IPv6 one as
// its IPv4), an IPv6 address by its /64, since one host is routinely given a whole /64 and
// would otherwise hold 2^64 budgets; anything else unchanged.
std::string address_group(const std::string& address);

struct RateLimit {
  double per_minute = 0;  // 0: unlimited
  double burst = 1;
};

class RateLimiter {
 public:
  explicit RateLimiter(RateLimit limit, std::size_t max_clients = 65536);
  // Takes `tokens` (default one) for `client`, all or none. Returns 0 when allowed, else the
  // seconds until that many are back (a request above the burst is never allowed: infinity).
  double take(const std::string& client, double tokens = 1.0);
  // The same at an explicit time (seconds on any monotonic clock), for tests.
  double take_at(const std::string& client, double now_s, double tokens = 1.0);

 private:
  struct Bucket {
    double tokens = 0;
    double updated_s = 0;
  };
  const RateLimit limit_;
  const std::size_t max_clients_;
  std::mutex mu_;
  std::map<std::string, Bucket> buckets_;
};

}  // namespace privsearch::protocol
