#include "harness/spawned_redis.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

namespace privsearch::tools {

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
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!std::filesystem::exists(r->socket_)) {
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
