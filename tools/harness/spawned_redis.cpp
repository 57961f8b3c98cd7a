#include "harness/spawned_redis.h"

#include <hiredis/hiredis.h>
#include <unistd.h>

#include <chrono>
#include <string_view>
#include <vector>

#include "server/child_process.h"

namespace privsearch::tools {
namespace {

bool answers_ping(const std::filesystem::path& socket) {
  if (!std::filesystem::exists(socket)) return false;
  redisContext* c = redisConnectUnixWithTimeout(socket.c_str(), timeval{0, 200000});
  bool pong = false;
  if (c != nullptr && c->err == 0) {
    auto* reply = static_cast<redisReply*>(redisCommand(c, "PING"));
    // Up: PONG, or NOAUTH from a Redis that requires a password (it is serving, not loading).
    pong = reply != nullptr && ((reply->type == REDIS_REPLY_STATUS &&
                                 std::string_view(reply->str, reply->len) == "PONG") ||
                                (reply->type == REDIS_REPLY_ERROR &&
                                 std::string_view(reply->str, reply->len).rfind("NOAUTH", 0) == 0));
    if (reply != nullptr) freeReplyObject(reply);
  }
  if (c != nullptr) redisFree(c);
  return pong;
}

}  // namespace

Result<std::unique_ptr<SpawnedRedis>> SpawnedRedis::start(const std::filesystem::path& dir,
                                                          std::uint16_t port,
                                                          std::vector<std::string> extra) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::unique_ptr<SpawnedRedis> r(new SpawnedRedis());
  r->socket_ = dir / "redis.sock";
  r->port_ = port;
  std::filesystem::remove(r->socket_, ec);
  std::vector<std::string> args = {"redis-server",
                                   "--port",
                                   std::to_string(port),
                                   "--bind",
                                   "127.0.0.1",
                                   "--unixsocket",
                                   r->socket_.string(),
                                   "--unixsocketperm",
                                   "700",
                                   "--dir",
                                   dir.string(),
                                   "--appendonly",
                                   "yes",
                                   "--appendfsync",
                                   "everysec",
                                   "--maxmemory-policy",
                                   "noeviction",
                                   "--save",
                                   "",
                                   "--daemonize",
                                   "no",
                                   "--loglevel",
                                   "warning",
                                   "--logfile",
                                   (dir / "redis.log").string()};
  args.insert(args.end(), extra.begin(), extra.end());
  r->pid_ = server::spawn_child(args);
  if (r->pid_ < 0) return Status(StatusCode::kUnavailable, "fork failed");
  // Ready when it answers PING with PONG: the socket exists before the append-only file is
  // loaded, and until then Redis answers -LOADING.
  PRIVSEARCH_RETURN_IF_ERROR(server::wait_until_ready(
      r->pid_, [&] { return answers_ping(r->socket_); }, std::chrono::seconds(10),
      "redis-server (installed? see " + (dir / "redis.log").string() + ")",
      std::chrono::milliseconds(10)));
  return r;
}

SpawnedRedis::~SpawnedRedis() { stop(); }

std::string SpawnedRedis::url() const {
  return port_ != 0 ? "redis://127.0.0.1:" + std::to_string(port_) + "/0"
                    : "unix://" + socket_.string();
}

int SpawnedRedis::stop(int sig) { return server::stop_child(pid_, sig); }

}  // namespace privsearch::tools
