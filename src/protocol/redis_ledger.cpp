#include "protocol/redis_ledger.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "protocol/redis_connection.h"

namespace privsearch::protocol {
namespace {

constexpr std::string_view kKeyPrefix = "privsearch:budget:";
constexpr std::int64_t kNever = std::int64_t{1} << 40;  // Unix seconds: year 36812
// Integers a Lua number (a double) holds exactly.
constexpr std::uint64_t kLuaExact = std::uint64_t{1} << 52;

// KEYS: the accounts; ARGV: units, limit_1..limit_n, expires_1..expires_n (Unix seconds, at
// most kNever = 2^40, which means no expiry; Lua numbers are doubles, exact below 2^53, and
// limits are clamped there). Returns {0, remaining_1..n} when charged, {i} when account i
// (1-based) has no room for the units (nothing charged).
constexpr RedisScript kChargeScript{R"lua(
local n = #KEYS
local units = tonumber(ARGV[1])
for i = 1, n do
  local spent = tonumber(redis.call('GET', KEYS[i]) or '0')
  if spent + units > tonumber(ARGV[1 + i]) then return {i} end
end
local out = {0}
for i = 1, n do
  local spent = redis.call('INCRBY', KEYS[i], units)
  local expires = tonumber(ARGV[1 + n + i])
  if expires < 1099511627776 then
    local ttl = redis.call('TTL', KEYS[i])
    local now = tonumber(redis.call('TIME')[1])
    if ttl == -1 or now + ttl < expires then redis.call('EXPIREAT', KEYS[i], expires) end
  end
  out[i + 1] = tonumber(ARGV[1 + i]) - spent
end
return out
)lua"};

// `privsearch:budget:{<group>}:<name>`: the braces are Redis Cluster's hash tag, so the accounts
// of one request (one group) live in one slot and one script can charge them all.
std::string redis_key(const BudgetAccount& a) {
  return fmt::format("{}{{{}}}:{}", kKeyPrefix, a.group.empty() ? a.name : a.group, a.name);
}

class RedisLedger final : public BudgetLedger {
 public:
  RedisLedger(RedisUrl url, int timeout_ms) : redis_(std::move(url), timeout_ms) {}

  Result<BudgetCharge> charge(std::span<const BudgetAccount> accounts,
                              std::uint64_t units) override {
    if (units == 0) return Status(StatusCode::kInvalidArgument, "a budget charge of zero units");
    if (accounts.empty()) return BudgetCharge{};
    std::vector<std::string> keys, args{std::to_string(std::min(units, kLuaExact))};
    for (const auto& a : accounts) keys.push_back(redis_key(a));
    for (const auto& a : accounts) args.push_back(std::to_string(std::min(a.limit, kLuaExact)));
    for (const auto& a : accounts) args.push_back(std::to_string(std::min(a.expires_s, kNever)));
    // A reply lost after the script ran charges twice on the retry: an over-count, the safe
    // direction for a budget.
    PRIVSEARCH_ASSIGN_OR_RETURN(RedisReply r, redis_.eval(kChargeScript, keys, args));
    if (r->type != REDIS_REPLY_ARRAY || r->elements == 0 ||
        r->element[0]->type != REDIS_REPLY_INTEGER) {
      return redis_.unavailable("the charge script returned an unexpected reply");
    }
    BudgetCharge out;
    const long long first = r->element[0]->integer;
    if (first != 0) {
      if (first < 1 || static_cast<std::size_t>(first) > accounts.size()) {
        return redis_.unavailable("the charge script named no account");
      }
      out.full = static_cast<std::size_t>(first - 1);
      return out;
    }
    if (r->elements != accounts.size() + 1)
      return redis_.unavailable("short reply from the script");
    for (std::size_t i = 1; i < r->elements; ++i) {
      const long long v = r->element[i]->integer;
      out.remaining.push_back(v < 0 ? 0 : static_cast<std::uint64_t>(v));
    }
    return out;
  }

  Result<std::uint64_t> remaining(const BudgetAccount& account) override {
    auto r = redis_.command({"GET", redis_key(account)});
    PRIVSEARCH_RETURN_IF_ERROR(redis_.check(r, "GET"));
    std::uint64_t spent = 0;
    if (const auto v = reply_string(r->get()))
      std::from_chars(v->data(), v->data() + v->size(), spent);
    return spent >= account.limit ? 0 : account.limit - spent;
  }

  std::string where() const override { return redis_.display(); }

 private:
  RedisConnection redis_;
};

}  // namespace

Result<std::unique_ptr<BudgetLedger>> open_redis_ledger(const std::string& url, int timeout_ms) {
  PRIVSEARCH_ASSIGN_OR_RETURN(auto parsed, parse_redis_url(url));
  auto ledger = std::make_unique<RedisLedger>(std::move(parsed), timeout_ms);
  // Reach it now: a provider that cannot record budgets does not start.
  PRIVSEARCH_RETURN_IF_ERROR(ledger->remaining(BudgetAccount{"probe", 1, 0}).status());
  return std::unique_ptr<BudgetLedger>(std::move(ledger));
}

}  // namespace privsearch::protocol
