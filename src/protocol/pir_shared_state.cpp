#include "protocol/pir_shared_state.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "protocol/budget_ledger.h"
#include "protocol/redis_connection.h"

namespace privsearch::protocol {
namespace {

std::string client_key(std::uint64_t client, std::string_view what) {
  return fmt::format("privsearch:pir:{{{}}}:{}", client, what);
}
std::string client_key(std::uint64_t client, std::string_view what, const std::string& version) {
  return fmt::format("privsearch:pir:{{{}}}:{}:{}", client, what, version);
}
constexpr std::string_view kClients = "privsearch:pir:clients";
constexpr std::string_view kSeed = "privsearch:pir:a-seed";

// Tops a registered client up to ready_per_client hints ready or pending and returns the ready
// indices; false when the client is not registered. Refreshes the registration.
// KEYS: setup, clients, hints, pending, work, work_first
// ARGV: client, now, idle_s, ready_per_client, pending_ttl_s
constexpr RedisScript kTopUp{R"lua(
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('EXPIRE', KEYS[3], ARGV[3])
local ready = redis.call('HLEN', KEYS[3])
local pending = tonumber(redis.call('GET', KEYS[4]) or '0')
local want = tonumber(ARGV[4]) - ready - pending
for i = 1, want do
  if i == 1 and ready == 0 and pending == 0 then
    redis.call('RPUSH', KEYS[6], ARGV[1])
  else
    redis.call('RPUSH', KEYS[5], ARGV[1])
  end
end
if want > 0 then
  redis.call('INCRBY', KEYS[4], want)
  redis.call('EXPIRE', KEYS[4], ARGV[5])
  -- The lists live as long as the pending counts they back (an old version's lists go too).
  redis.call('EXPIRE', KEYS[5], ARGV[5])
  redis.call('EXPIRE', KEYS[6], ARGV[5])
end
return redis.call('HKEYS', KEYS[3])
)lua"};

// Registers a client within the cap, evicting the least recently used registration idle for
// evict_after_s when the cap is reached. Returns 1, or 0 when no room.
// KEYS: setup, clients; ARGV: setup, client, now, idle_s, max_clients, evict_after_s
constexpr RedisScript kRegister{R"lua(
local now = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[4]))
if not redis.call('ZSCORE', KEYS[2], ARGV[2]) and
   redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  if #oldest == 0 or tonumber(oldest[2]) > now - tonumber(ARGV[6]) then return 0 end
  redis.call('ZREM', KEYS[2], oldest[1])
  redis.call('DEL', 'privsearch:pir:{' .. oldest[1] .. '}:setup')
end
redis.call('ZADD', KEYS[2], now, ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[4])
return 1
)lua"};

// Takes one hint: {0} unknown client, {1} no hint for the index, {2, hint}. Hints of lower
// indices are dropped with it: a client's indices only move forward (hints delivered out of
// order by several workers would otherwise hold ready slots the client can never use).
// KEYS: setup, hints; ARGV: index
constexpr RedisScript kTake{R"lua(
if redis.call('EXISTS', KEYS[1]) == 0 then return {0} end
local h = redis.call('HGET', KEYS[2], ARGV[1])
if not h then return {1} end
redis.call('HDEL', KEYS[2], ARGV[1])
local taken = tonumber(ARGV[1])
for _, field in ipairs(redis.call('HKEYS', KEYS[2])) do
  if tonumber(field) < taken then redis.call('HDEL', KEYS[2], field) end
end
return {2, h}
)lua"};

// Claims the next index of a client popped from a work list: {index, setup}, or false (and the
// pending count released) when the client is gone.
// KEYS: setup, next, pending; ARGV: index_memory_s
constexpr RedisScript kClaim{R"lua(
local setup = redis.call('GET', KEYS[1])
if not setup then
  if tonumber(redis.call('GET', KEYS[3]) or '0') > 0 then redis.call('DECR', KEYS[3]) end
  return false
end
local i = redis.call('INCR', KEYS[2]) - 1
redis.call('EXPIRE', KEYS[2], ARGV[1])
return {i, setup}
)lua"};

// Delivers (or, without a hint, abandons) claimed work. KEYS: setup, hints, pending;
// ARGV: index, hint, idle_s
constexpr RedisScript kDeliver{R"lua(
if tonumber(redis.call('GET', KEYS[3]) or '0') > 0 then redis.call('DECR', KEYS[3]) end
if #ARGV < 2 or redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[3])
return 1
)lua"};

bool parse_u64(std::string_view s, std::uint64_t& out) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

class RedisPirState final : public PirSharedState {
 public:
  RedisPirState(const RedisUrl& url, PirSharedLimits limits)
      : limits_(limits), redis_(url, 2000), blocking_(url, 5000) {}

  Status probe() { return redis_.check(redis_.command({"PING"}), "PING"); }

  Result<std::string> a_seed(const std::string& proposal) override {
    PRIVSEARCH_RETURN_IF_ERROR(
        redis_.check(redis_.command({"SET", std::string(kSeed), proposal, "NX"}), "SET seed"));
    auto r = redis_.command({"GET", std::string(kSeed)});
    PRIVSEARCH_RETURN_IF_ERROR(redis_.check(r, "GET seed"));
    auto v = reply_string(r->get());
    if (!v) return redis_.unavailable("the PIR matrix seed vanished");
    return *v;
  }

  Status register_client(std::uint64_t client, const std::string& setup, const std::string& version,
                         const std::string& /*owner*/) override {
    PRIVSEARCH_ASSIGN_OR_RETURN(
        RedisReply r,
        redis_.eval(kRegister, {client_key(client, "setup"), std::string(kClients)},
                    {setup, std::to_string(client), std::to_string(unix_now_s()),
                     std::to_string(limits_.idle_expiry_s), std::to_string(limits_.max_clients),
                     std::to_string(limits_.evict_idle_after_s)}));
    if (r->type != REDIS_REPLY_INTEGER) return redis_.unavailable("register: unexpected reply");
    if (r->integer == 0) {
      return Status(StatusCode::kResourceExhausted,
                    fmt::format("{} PIR clients are registered cluster-wide and none has been "
                                "idle for {} s; retry later",
                                limits_.max_clients, limits_.evict_idle_after_s));
    }
    return ready(client, version).status();
  }

  Result<std::vector<std::uint64_t>> clients() override {
    auto r = redis_.command({"ZRANGEBYSCORE", std::string(kClients),
                             std::to_string(unix_now_s() - limits_.idle_expiry_s), "+inf"});
    PRIVSEARCH_RETURN_IF_ERROR(redis_.check(r, "ZRANGEBYSCORE clients"));
    if (r->get()->type != REDIS_REPLY_ARRAY) return redis_.unavailable("clients: unexpected reply");
    std::vector<std::uint64_t> out;
    for (std::size_t i = 0; i < r->get()->elements; ++i) {
      std::uint64_t id = 0;
      const auto s = reply_string(r->get()->element[i]);
      if (!s || !parse_u64(*s, id)) return redis_.unavailable("clients: a malformed client id");
      out.push_back(id);
    }
    return out;
  }

  Status bind_owner(std::uint64_t client, const std::string& identity) override {
    // SET NX: the first identity keeps it. The TTL outlives any registration the store keeps
    // (an idle one expires after idle_expiry_s; every use refreshes it).
    auto r =
        redis_.command({"SET", client_key(client, "owner"), identity, "NX", "EX",
                        std::to_string(std::max<std::int64_t>(limits_.idle_expiry_s, 60) * 2)});
    return redis_.check(r, "SET owner");
  }

  Result<std::optional<std::string>> owner_of(std::uint64_t client) override {
    // Refreshed by every check, like the registration by every use.
    auto r =
        redis_.command({"GETEX", client_key(client, "owner"), "EX",
                        std::to_string(std::max<std::int64_t>(limits_.idle_expiry_s, 60) * 2)});
    PRIVSEARCH_RETURN_IF_ERROR(redis_.check(r, "GETEX owner"));
    return reply_string(r->get());
  }

  Result<std::optional<std::string>> setup_of(std::uint64_t client) override {
    auto r = redis_.command(
        {"GETEX", client_key(client, "setup"), "EX", std::to_string(limits_.idle_expiry_s)});
    PRIVSEARCH_RETURN_IF_ERROR(redis_.check(r, "GETEX setup"));
    return reply_string(r->get());
  }

  Result<std::optional<std::vector<std::uint64_t>>> ready(std::uint64_t client,
                                                          const std::string& version) override {
    PRIVSEARCH_ASSIGN_OR_RETURN(
        RedisReply r,
        redis_.eval(
            kTopUp,
            {client_key(client, "setup"), std::string(kClients),
             client_key(client, "hints", version), client_key(client, "pending", version),
             "privsearch:pir:work:" + version, "privsearch:pir:work-first:" + version},
            {std::to_string(client), std::to_string(unix_now_s()),
             std::to_string(limits_.idle_expiry_s), std::to_string(limits_.ready_per_client),
             std::to_string(limits_.pending_ttl_s)}));
    if (reply_is_nil(r.get())) return std::optional<std::vector<std::uint64_t>>();
    if (r->type != REDIS_REPLY_ARRAY) return redis_.unavailable("ready: unexpected reply");
    std::vector<std::uint64_t> out;
    for (std::size_t i = 0; i < r->elements; ++i) {
      std::uint64_t index = 0;
      const auto s = reply_string(r->element[i]);
      if (!s || !parse_u64(*s, index)) return redis_.unavailable("ready: a malformed hint index");
      out.push_back(index);
    }
    std::sort(out.begin(), out.end());
    return std::optional<std::vector<std::uint64_t>>(std::move(out));
  }

  Result<std::string> take_hint(std::uint64_t client, const std::string& version,
                                std::uint64_t index) override {
    PRIVSEARCH_ASSIGN_OR_RETURN(
        RedisReply r,
        redis_.eval(kTake, {client_key(client, "setup"), client_key(client, "hints", version)},
                    {std::to_string(index)}));
    if (r->type != REDIS_REPLY_ARRAY || r->elements == 0 ||
        r->element[0]->type != REDIS_REPLY_INTEGER) {
      return redis_.unavailable("take: unexpected reply");
    }
    switch (r->element[0]->integer) {
      case 0:
        return Status(StatusCode::kNotFound, "unknown PIR client");
      case 1:
        return Status(StatusCode::kFailedPrecondition,
                      fmt::format("no precomputed hint for query index {} of this client (not "
                                  "ready, or already used)",
                                  index));
      default:
        break;
    }
    auto hint = r->elements == 2 ? reply_string(r->element[1]) : std::nullopt;
    if (!hint) return redis_.unavailable("take: no hint in the reply");
    return *hint;
  }

  Result<std::optional<Work>> next_work(const std::string& version, int wait_s) override {
    auto popped = blocking_.command({"BLPOP", "privsearch:pir:work-first:" + version,
                                     "privsearch:pir:work:" + version, std::to_string(wait_s)});
    PRIVSEARCH_RETURN_IF_ERROR(blocking_.check(popped, "BLPOP"));
    if (reply_is_nil(popped->get())) return std::optional<Work>();
    const redisReply* p = popped->get();
    std::uint64_t client = 0;
    const auto id = p->type == REDIS_REPLY_ARRAY && p->elements == 2 ? reply_string(p->element[1])
                                                                     : std::nullopt;
    if (!id || !parse_u64(*id, client)) return redis_.unavailable("a malformed work item");
    PRIVSEARCH_ASSIGN_OR_RETURN(
        RedisReply r, redis_.eval(kClaim,
                                  {client_key(client, "setup"), client_key(client, "next"),
                                   client_key(client, "pending", version)},
                                  {std::to_string(limits_.index_memory_s)}));
    if (reply_is_nil(r.get())) return std::optional<Work>();  // the client left
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[0]->type != REDIS_REPLY_INTEGER) {
      return redis_.unavailable("claim: unexpected reply");
    }
    auto setup = reply_string(r->element[1]);
    if (!setup) return redis_.unavailable("claim: no setup in the reply");
    return std::optional<Work>(
        Work{client, static_cast<std::uint64_t>(r->element[0]->integer), std::move(*setup)});
  }

  Status deliver(const Work& work, const std::string& version, const std::string& hint) override {
    return redis_
        .eval(kDeliver,
              {client_key(work.client, "setup"), client_key(work.client, "hints", version),
               client_key(work.client, "pending", version)},
              {std::to_string(work.index), hint, std::to_string(limits_.idle_expiry_s)})
        .status();
  }

  Status abandon(const Work& work, const std::string& version) override {
    return redis_
        .eval(kDeliver,
              {client_key(work.client, "setup"), client_key(work.client, "hints", version),
               client_key(work.client, "pending", version)},
              {std::to_string(work.index)})
        .status();
  }

  std::string where() const override { return redis_.display(); }

 private:
  const PirSharedLimits limits_;
  RedisConnection redis_;
  RedisConnection blocking_;  // BLPOP holds its connection: the workers' own
};

}  // namespace

Result<std::unique_ptr<PirSharedState>> open_redis_pir_state(const std::string& url,
                                                             PirSharedLimits limits) {
  PRIVSEARCH_ASSIGN_OR_RETURN(auto parsed, parse_redis_url(url));
  auto state = std::make_unique<RedisPirState>(parsed, limits);
  PRIVSEARCH_RETURN_IF_ERROR(state->probe());
  return std::unique_ptr<PirSharedState>(std::move(state));
}

}  // namespace privsearch::protocol
