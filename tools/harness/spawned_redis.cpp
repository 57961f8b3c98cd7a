#include "harness/spawned_redis.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include <chrono>
#include <string_view>
#include <thread>
#include <vector>

namespace privsearch::tools {
namespace {

bool answers_ping(const std::filesystem::path& socket) {
  if (!std::filesystem::exists(socket)) return false;
  redisContext* c = redisConnectUnixWithTimeout(socket.c_str(), timeval{0, 200000});
  bool pong = false;
  if (c != nullptr && c->err == 0) {
    auto* reply = static_cast<redisReply*>(redisCommand(c, "PING"));
    pong = reply != nullptr && reply->type == REDIS_REPLY_STATUS &&
           std::string_view(reply->str, reply->len) == "PONG";
    if (reply != nullptr) freeReplyObject(reply);
  }
  if (c != nullptr) redisFree(c);
  return pong;
}

}  // namespace

Result<std::unique_ptr<SpawnedRedis>> SpawnedRedis::start(const std::filesystem::path& dir,
                                                         std::uint16_t port) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::unique_ptr<SpawnedRedis> r(new SpawnedRedis());
  r->socket_ = dir / "redis.sock";
  r->port_ = port;
  std::filesystem::remove(r->socket_, ec);
  std::vector<std::string> args = {"redis-server",
                                   "--port", std::to_string(port),
                                   "--bind", "127.0.0.1",
                                   "--unixsocket", r->socket_.string(),
                                   "--unixsocketperm", "700",
                                   "--dir", dir.string(),
                                   "--appendonly", "yes",
                                   "--appendfsync", "everysec",
                                   "--save", "",
                                   "--daemonize", "no",
                                   "--loglevel", "warning",
                                   "--logfile", (dir / "redis.log").string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  r->pid_ = ::fork();
  if (r->pid_ < 0) return Status(StatusCode::kUnavailable, "fork failed");
  if (r->pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // never outlive the test that started it
    if (::getppid() == 1) ::_exit(126);
    ::execvp("redis-server", argv.data());
    ::_exit(127);
  }
  // Ready when it answers PING with PONG: the socket exists before the append-only file is
  // loaded, and until then Redis answers -LOADING.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!answers_ping(r->socket_)) {
    int st = 0;
    if (::waitpid(r->pid_, &st, WNOHANG) == r->pid_) {
      r->pid_ = -1;
      return Status(StatusCode::kUnavailable,
                    "redis-server exited at start-up (installed? see " + (dir / "redis.log").string() +
                        ")");
    }
    if (std::chrono::steady_clock::now() > until) {
      return Status(StatusCode::kUnavailable, "redis-server did not start within 10 s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return r;
}

SpawnedRedis::~SpawnedRedis() { stop(); }

std::string SpawnedRedis::url() const {
  return port_ != 0 ? "redis://127.0.0.1:" + std::to_string(port_) + "/0"
                    : "unix://" + socket_.string();
}

int SpawnedRedis::stop(int sig) {
  if (pid_ <= 0) return -1;
  ::kill(pid_, sig);
  int st = 0;
  ::waitpid(pid_, &st, 0);
  pid_ = -1;
  return st;
}

}  // namespace privsearch::tools
