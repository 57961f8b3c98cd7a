#include "protocol/redis_connection.h"

#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>

#include <charconv>
#include <cstdlib>

namespace privsearch::protocol {
namespace {

// hiredis writes with write(2): a Redis that went away would raise SIGPIPE. The signal is
// blocked in this thread for the command and a pending one consumed, whatever the process's
// handler.
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

// One command on `c` (binary-safe arguments); null when the connection broke.
RedisReply run(redisContext* c, const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  std::vector<std::size_t> lens;
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  return RedisReply(static_cast<redisReply*>(
      redisCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lens.data())));
}

bool parse_int(std::string_view s, int& out) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace

bool is_redis_url(const std::string& url) {
  return url.rfind("redis://", 0) == 0 || url.rfind("unix://", 0) == 0;
}

Result<RedisUrl> parse_redis_url(const std::string& url) {
  RedisUrl u;
  auto bad = [&](const char* why) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("Redis URL: {} (expected redis://[[USER]:PASSWORD@]HOST:PORT[/DB] "
                              "or unix:///PATH[?db=N])",
                              why));
  };
  auto from_environment = [&u] {
    if (!u.password.empty()) return;
    if (const char* p = std::getenv("PRIVSEARCH_REDIS_PASSWORD")) u.password = p;
    if (const char* user = std::getenv("PRIVSEARCH_REDIS_USER")) u.user = user;
  };
  if (url.rfind("unix://", 0) == 0) {
    from_environment();
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
    const std::string auth = rest.substr(0, at);
    if (const auto colon = auth.find(':'); colon != std::string::npos) {
      u.user = auth.substr(0, colon);  // empty: the default user
      u.password = auth.substr(colon + 1);
    } else {
      u.password = auth;
    }
    if (u.password.empty()) return bad("an empty password");
    rest = rest.substr(at + 1);
  }
  from_environment();
  if (const auto slash = rest.find('/'); slash != std::string::npos) {
    if (!parse_int(std::string_view(rest).substr(slash + 1), u.db))
      return bad("db is not a number");
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

Status RedisConnection::unavailable(std::string_view why) const {
  return Status(StatusCode::kUnavailable, fmt::format("Redis at {}: {}", url_.display, why));
}

Status RedisConnection::check(const Result<RedisReply>& reply, std::string_view what) const {
  if (!reply.ok()) return reply.status();
  const redisReply* r = reply->get();
  if (r == nullptr) return unavailable(fmt::format("{}: no reply", what));
  if (r->type == REDIS_REPLY_ERROR) {
    return unavailable(fmt::format("{}: {}", what, std::string_view(r->str, r->len)));
  }
  return Status();
}

Status RedisConnection::connect_locked() {
  timeval tv{timeout_ms_ / 1000, (timeout_ms_ % 1000) * 1000};
  redisContext* c = url_.unix_path.empty()
                        ? redisConnectWithTimeout(url_.host.c_str(), url_.port, tv)
                        : redisConnectUnixWithTimeout(url_.unix_path.c_str(), tv);
  ctx_.reset(c);
  if (c == nullptr || c->err != 0) {
    const std::string why = c == nullptr ? "out of memory" : c->errstr;
    ctx_.reset();
    return unavailable(fmt::format("cannot connect: {}", why));
  }
  redisSetTimeout(c, tv);
  auto setup = [&](const std::vector<std::string>& args, const char* what) -> Status {
    RedisReply r = run(c, args);
    if (!r || r->type == REDIS_REPLY_ERROR) {
      const std::string why = r ? std::string(r->str, r->len) : std::string(c->errstr);
      ctx_.reset();
      return unavailable(fmt::format("{}: {}", what, why));
    }
    return Status();
  };
  if (!url_.password.empty()) {
    PRIVSEARCH_RETURN_IF_ERROR(url_.user.empty()
                                   ? setup({"AUTH", url_.password}, "AUTH")
                                   : setup({"AUTH", url_.user, url_.password}, "AUTH"));
  }
  if (url_.db != 0)
    PRIVSEARCH_RETURN_IF_ERROR(setup({"SELECT", std::to_string(url_.db)}, "SELECT"));
  return Status();
}

Result<RedisReply> RedisConnection::command_locked(const std::vector<std::string>& args) {
  const SigpipeGuard no_sigpipe;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!ctx_) {
      const Status s = connect_locked();
      if (!s.ok()) {
        if (attempt == 1) return s;
        continue;
      }
    }
    RedisReply r = run(ctx_.get(), args);
    if (r) return r;
    const std::string why = ctx_->errstr;
    ctx_.reset();  // broken: reconnect next time
    if (attempt == 1) return unavailable(why);
  }
  return unavailable("unreachable");
}

Result<RedisReply> RedisConnection::command(const std::vector<std::string>& args) {
  std::lock_guard lock(mu_);
  return command_locked(args);
}

Result<RedisReply> RedisConnection::eval(const RedisScript& script,
                                         const std::vector<std::string>& keys,
                                         const std::vector<std::string>& args) {
  // EVAL sends the text each time (a few hundred bytes); Redis caches compiled scripts by their
  // SHA-1, so repeated EVALs do not recompile. Simpler than EVALSHA + NOSCRIPT bookkeeping, and
  // correct across Redis restarts and SCRIPT FLUSH by construction.
  std::vector<std::string> argv{"EVAL", std::string(script.text), std::to_string(keys.size())};
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());
  Result<RedisReply> r = command(argv);
  PRIVSEARCH_RETURN_IF_ERROR(check(r, "script"));
  return r;
}

std::optional<std::string> reply_string(const redisReply* r) {
  if (r == nullptr || (r->type != REDIS_REPLY_STRING && r->type != REDIS_REPLY_STATUS)) {
    return std::nullopt;
  }
  return std::string(r->str, r->len);
}

bool reply_is_nil(const redisReply* r) { return r == nullptr || r->type == REDIS_REPLY_NIL; }

}  // namespace privsearch::protocol
