// One connection to Redis (hiredis from Debian) for the provider's shared state: the budget
// ledger, the key-set store and the PIR registrations and hint queue (the scale-out state tier).
//
// What every user of Redis here needs, once: URL parsing (redis://[[USER]:PASSWORD@]HOST:PORT[/DB]
// or unix:///PATH[?db=N]), AUTH and SELECT on every (re)connection, Lua scripts loaded by SHA-1 on
// every connection (scripts do not survive a Redis restart) and re-sent on NOSCRIPT, one
// reconnect-and-retry on a broken connection, and SIGPIPE blocked while writing (a Redis that
// went away must be an error, never a dead provider). Every failure is kUnavailable with the
// Redis address (never the password), so callers fail closed with STATE_UNAVAILABLE.
// hiredis 0.14 (Debian 12) has no TLS: reach Redis on loopback, a unix socket or a TLS tunnel.
// Thread safety: all members may be called concurrently (one connection behind a mutex; a
// blocking command such as BLPOP holds it, so give blocking users a connection of their own).
#pragma once

#include <hiredis/hiredis.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace privsearch::protocol {

struct RedisUrl {
  std::string host, unix_path, user, password;
  int port = 6379, db = 0;
  std::string display;  // without the password: safe for logs and ServerInfo
};

// redis://[[USER]:PASSWORD@]HOST:PORT[/DB] or unix:///PATH[?db=N]. Without credentials in the
// URL, PRIVSEARCH_REDIS_USER and PRIVSEARCH_REDIS_PASSWORD from the environment are used (a
// password on a command line is visible to every local user in /proc). A user means Redis 6+
// ACL authentication (AUTH user password). kInvalidArgument naming what is wrong.
Result<RedisUrl> parse_redis_url(const std::string& url);
bool is_redis_url(const std::string& url);

struct RedisReplyDeleter {
  void operator()(redisReply* r) const {
    if (r != nullptr) freeReplyObject(r);
  }
};
using RedisReply = std::unique_ptr<redisReply, RedisReplyDeleter>;

// A Lua script run by EVALSHA; its text is kept for EVAL after a script flush.
struct RedisScript {
  std::string_view text;
};

class RedisConnection {
 public:
  RedisConnection(RedisUrl url, int timeout_ms) : url_(std::move(url)), timeout_ms_(timeout_ms) {}
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // One command. A Redis error reply is returned as a reply (type REDIS_REPLY_ERROR), a broken
  // connection as kUnavailable after one reconnect. A reply lost after a command ran means the
  // command may run twice: callers make their commands safe to repeat or say why the repeat is
  // harmless.
  Result<RedisReply> command(const std::vector<std::string>& args);
  // A script over `keys` and `args`; an error reply becomes kUnavailable.
  Result<RedisReply> eval(const RedisScript& script, const std::vector<std::string>& keys,
                          const std::vector<std::string>& args);
  // kUnavailable for a missing or error reply, naming `what`.
  Status check(const Result<RedisReply>& reply, std::string_view what) const;

  const std::string& display() const { return url_.display; }
  Status unavailable(std::string_view why) const;

 private:
  Status connect_locked();
  Result<RedisReply> command_locked(const std::vector<std::string>& args);

  struct ContextDeleter {
    void operator()(redisContext* c) const {
      if (c != nullptr) redisFree(c);
    }
  };
  const RedisUrl url_;
  const int timeout_ms_;
  std::mutex mu_;
  std::unique_ptr<redisContext, ContextDeleter> ctx_;
};

// Helpers for replies.
std::optional<std::string> reply_string(const redisReply* r);  // a bulk string; nullopt for nil
bool reply_is_nil(const redisReply* r);

}  // namespace privsearch::protocol
