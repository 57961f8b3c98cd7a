#include "protocol/redis_ledger.h"

#include <fmt/format.h>
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <charconv>
#include <mutex>


namespace privsearch::protocol {
namespace {

constexpr std::string_view kKeyPrefix = "privsearch:budget:";
constexpr std::int64_t kNever = std::int64_t{1} << 40;  // Unix seconds: year 36812

// KEYS: the accounts; ARGV: limit_1..limit_n, expires_1..expires_n (Unix seconds, at most
// kNever = 2^40, which means no expiry; Lua numbers are doubles, exact below 2^53).
// Returns {0, remaining_1..n} when charged, {i} when account i (1-based) is full.
constexpr std::string_view kChargeScript = R"lua(
local n = #KEYS
for i = 1, n do
  local spent = tonumber(redis.call('GET', KEYS[i]) or '0')
  if spent >= tonumber(ARGV[i]) then return {i} end
end
local out = {0}
for i = 1, n do
  local spent = redis.call('INCR', KEYS[i])
  local expires = tonumber(ARGV[n + i])
  if expires < 1099511627776 then
    local ttl = redis.call('TTL', KEYS[i])
    local now = tonumber(redis.call('TIME')[1])
    if ttl == -1 or now + ttl < expires then redis.call('EXPIREAT', KEYS[i], expires) end
  end
  out[i + 1] = tonumber(ARGV[i]) - spent
end
return out
)lua";

// hiredis writes with write(2): a Redis that went away would raise SIGPIPE and kill the
// provider. The signal is blocked in this thread for the command and a pending one consumed, so
// a dead Redis is an error (fail closed), never a dead provider, whatever the process's handler.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeGuard() {
    const timespec zero{0, 0};
    while (sigtimedwait(&pipe_, nullptr, &zero) == SIGPIPE) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t pipe_{}, old_{};
};

struct ReplyDeleter {
  void operator()(redisReply* r) const {
    if (r != nullptr) freeReplyObject(r);
  }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

struct ContextDeleter {
  void operator()(redisContext* c) const {
    if (c != nullptr) redisFree(c);
  }
};

struct RedisUrl {
  std::string host, unix_path, password;
  int port = 6379, db = 0;
  std::string display;  // without the password
};

Result<RedisUrl> parse_url(const std::string& url) {
  RedisUrl u;
  auto bad = [&](const char* why) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("Redis URL: {} (expected redis://[:PASSWORD@]HOST:PORT[/DB] or "
                              "unix:///PATH[?db=N])",
                              why));
  };
  auto parse_int = [](std::string_view s, int& out) {
    const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
    return r.ec == std::errc() && r.ptr == s.data() + s.size();
  };
  if (url.rfind("unix://", 0) == 0) {
    std::string rest = url.substr(7);
    if (const auto q = rest.find("?db="); q != std::string::npos) {
      if (!parse_int(std::string_view(rest).substr(q + 4), u.db)) return bad("db is not a number");
      rest.resize(q);
    }
    if (rest.empty() || rest.front() != '/') return bad("the socket path must be absolute");
    u.unix_path = rest;
    u.display = "unix://" + rest + (u.db != 0 ? "?db=" + std::to_string(u.db) : "");
    return u;
  }
  if (url.rfind("redis://", 0) != 0) return bad("unknown scheme");
  std::string rest = url.substr(8);
  if (const auto at = rest.rfind('@'); at != std::string::npos) {
    std::string auth = rest.substr(0, at);
    if (!auth.empty() && auth.front() == ':') auth.erase(0, 1);
    u.password = auth;
    rest = rest.substr(at + 1);
  }
  if (const auto slash = rest.find('/'); slash != std::string::npos) {
    if (!parse_int(std::string_view(rest).substr(slash + 1), u.db)) return bad("db is not a number");
    rest.resize(slash);
  }
  const auto colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0) return bad("host:port missing");
  u.host = rest.substr(0, colon);
  if (!parse_int(std::string_view(rest).substr(colon + 1), u.port) || u.port <= 0 ||
      u.port > 65535) {
    return bad("port out of range");
  }
  u.display = fmt::format("redis://{}:{}/{}", u.host, u.port, u.db);
  return u;
}

class RedisLedger final : public BudgetLedger {
 public:
  RedisLedger(RedisUrl url, int timeout_ms) : url_(std::move(url)), timeout_ms_(timeout_ms) {}

  Status connect_locked() {
    const SigpipeGuard no_sigpipe;
    timeval tv{timeout_ms_ / 1000, (timeout_ms_ % 1000) * 1000};
    redisContext* c = url_.unix_path.empty()
                          ? redisConnectWithTimeout(url_.host.c_str(), url_.port, tv)
                          : redisConnectUnixWithTimeout(url_.unix_path.c_str(), tv);
    ctx_.reset(c);
    if (c == nullptr || c->err != 0) {
      const std::string why = c == nullptr ? "out of memory" : c->errstr;
      ctx_.reset();
      return Status(StatusCode::kUnavailable,
                    fmt::format("cannot reach Redis at {}: {}", url_.display, why));
    }
    redisSetTimeout(c, tv);
    if (!url_.password.empty()) {
      Reply r(static_cast<redisReply*>(redisCommand(c, "AUTH %s", url_.password.c_str())));
      PRIVSEARCH_RETURN_IF_ERROR(check(r, "AUTH"));
    }
    if (url_.db != 0) {
      Reply r(static_cast<redisReply*>(redisCommand(c, "SELECT %d", url_.db)));
      PRIVSEARCH_RETURN_IF_ERROR(check(r, "SELECT"));
    }
    // Scripts do not survive a Redis restart: load it on every connection (its SHA-1 is the
    // name EVALSHA calls it by).
    const std::string script(kChargeScript);
    Reply r(static_cast<redisReply*>(redisCommand(c, "SCRIPT LOAD %b", script.data(), script.size())));
    PRIVSEARCH_RETURN_IF_ERROR(check(r, "SCRIPT LOAD"));
    if (r->type != REDIS_REPLY_STRING) return unavailable("SCRIPT LOAD returned no digest");
    script_sha_.assign(r->str, r->len);
    return Status();
  }

  Result<std::vector<std::uint64_t>> charge(std::span<const BudgetAccount> accounts) override {
    if (accounts.empty()) return std::vector<std::uint64_t>{};
    std::lock_guard lock(mu_);
    if (!ctx_) {
      PRIVSEARCH_RETURN_IF_ERROR(connect_locked());
    }
    std::vector<std::string> args = {"EVALSHA", script_sha_, std::to_string(accounts.size())};
    for (const auto& a : accounts) args.push_back(std::string(kKeyPrefix) + a.name);
    for (const auto& a : accounts) args.push_back(std::to_string(a.limit));
    for (const auto& a : accounts) args.push_back(std::to_string(std::min(a.expires_s, kNever)));
    PRIVSEARCH_ASSIGN_OR_RETURN(Reply r, command_locked(args));
    if (r->type == REDIS_REPLY_ERROR && std::string_view(r->str, r->len).find("NOSCRIPT") == 0) {
      args[0] = "EVAL";
      args[1] = std::string(kChargeScript);
      PRIVSEARCH_ASSIGN_OR_RETURN(r, command_locked(args));
    }
    PRIVSEARCH_RETURN_IF_ERROR(check(r, "the charge script"));
    if (r->type != REDIS_REPLY_ARRAY || r->elements == 0 ||
        r->element[0]->type != REDIS_REPLY_INTEGER) {
      return unavailable("the charge script returned an unexpected reply");
    }
    const long long first = r->element[0]->integer;
    if (first != 0) {
      if (first < 1 || static_cast<std::size_t>(first) > accounts.size()) {
        return unavailable("the charge script named no account");
      }
      return Status(StatusCode::kResourceExhausted,
                    accounts[static_cast<std::size_t>(first - 1)].name);
    }
    if (r->elements != accounts.size() + 1) return unavailable("short reply from the script");
    std::vector<std::uint64_t> remaining;
    for (std::size_t i = 1; i < r->elements; ++i) {
      const long long v = r->element[i]->integer;
      remaining.push_back(v < 0 ? 0 : static_cast<std::uint64_t>(v));
    }
    return remaining;
  }

  Result<std::uint64_t> remaining(const BudgetAccount& account) override {
    std::lock_guard lock(mu_);
    PRIVSEARCH_ASSIGN_OR_RETURN(
        Reply r, command_locked({"GET", std::string(kKeyPrefix) + account.name}));
    PRIVSEARCH_RETURN_IF_ERROR(check(r, "GET"));
    std::uint64_t spent = 0;
    if (r->type == REDIS_REPLY_STRING) {
      std::from_chars(r->str, r->str + r->len, spent);
    }
    return spent >= account.limit ? 0 : account.limit - spent;
  }

  std::string where() const override { return url_.display; }

 private:
  Status unavailable(const std::string& why) const {
    return Status(StatusCode::kUnavailable, fmt::format("Redis at {}: {}", url_.display, why));
  }
  Status check(const Reply& r, const char* what) const {
    if (!r) return unavailable(std::string(what) + ": no reply");
    if (r->type == REDIS_REPLY_ERROR) {
      return unavailable(fmt::format("{}: {}", what, std::string_view(r->str, r->len)));
    }
    return Status();
  }

  // One command; on a broken connection it reconnects once and retries. A reply lost after the
  // script ran would charge twice: an over-count, the safe direction for a budget.
  Result<Reply> command_locked(const std::vector<std::string>& args) {
    const SigpipeGuard no_sigpipe;
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (!ctx_) {
        const Status s = connect_locked();
        if (!s.ok()) {
          if (attempt == 1) return s;
          continue;
        }
      }
      std::vector<const char*> argv;
      std::vector<std::size_t> lens;
      for (const auto& a : args) {
        argv.push_back(a.data());
        lens.push_back(a.size());
      }
      Reply r(static_cast<redisReply*>(redisCommandArgv(ctx_.get(), static_cast<int>(argv.size()),
                                                        argv.data(), lens.data())));
      if (r) return r;
      const std::string why = ctx_->errstr;
      ctx_.reset();  // broken: reconnect next time
      if (attempt == 1) return unavailable(why);
    }
    return unavailable("unreachable");
  }

  const RedisUrl url_;
  const int timeout_ms_;
  std::string script_sha_;
  std::mutex mu_;
  std::unique_ptr<redisContext, ContextDeleter> ctx_;
};

}  // namespace

Result<std::unique_ptr<BudgetLedger>> open_redis_ledger(const std::string& url, int timeout_ms) {
  PRIVSEARCH_ASSIGN_OR_RETURN(auto parsed, parse_url(url));
  auto ledger = std::make_unique<RedisLedger>(std::move(parsed), timeout_ms);
  // Reach it now: a provider that cannot record budgets does not start.
  PRIVSEARCH_RETURN_IF_ERROR(ledger->remaining(BudgetAccount{"probe", 1, 0}).status());
  return std::unique_ptr<BudgetLedger>(std::move(ledger));
}

}  // namespace privsearch::protocol
