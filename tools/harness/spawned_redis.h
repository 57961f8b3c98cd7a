// A real redis-server (Debian's) as a child process for tests and demos: on a unix socket in
// its own directory (no TCP port to collide on) or on a loopback TCP port, append-only file on,
// started and waited for, and stopped by its pid (SIGTERM: Redis flushes the AOF and exits).
// Restarting on the same directory reloads the AOF, as a restarted production Redis would.
// Thread safety: one owner.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace privsearch::tools {

class SpawnedRedis {
 public:
  // `port` 0: a unix socket `dir/redis.sock` only. kUnavailable when redis-server is missing or
  // does not come up within 10 s.
  // `extra`: more redis-server options (e.g. {"--requirepass", "..."}).
  static Result<std::unique_ptr<SpawnedRedis>> start(const std::filesystem::path& dir,
                                                     std::uint16_t port = 0,
                                                     std::vector<std::string> extra = {});
  ~SpawnedRedis();  // stop()
  SpawnedRedis(const SpawnedRedis&) = delete;
  SpawnedRedis& operator=(const SpawnedRedis&) = delete;

  // The URL a provider's --state takes.
  std::string url() const;
  pid_t pid() const { return pid_; }
  // SIGTERM (or `sig`) and wait; the wait status, -1 when already stopped.
  int stop(int sig = 15);

 private:
  SpawnedRedis() = default;
  pid_t pid_ = -1;
  std::filesystem::path socket_;
  std::uint16_t port_ = 0;
};

}  // namespace privsearch::tools
