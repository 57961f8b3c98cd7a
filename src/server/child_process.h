// The one way privsearch starts and stops the processes it runs beside itself (the provider's
// HTTP/2 front; in the harness privsearch-provider, redis-server, haproxy): fork + exec with the
// child bound to its parent's life, readiness polled with the child's death noticed, and a stop
// by pid that reaps it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"

namespace privsearch::server {

// Starts `args` (args[0] as a path, or looked up in PATH when it has no slash). The child gets
// SIGTERM when this process dies, so a crashed test leaves nothing behind; `quiet` sends its
// stdout to /dev/null. `fd3` and `fd4`, when >= 0, are inherited as the child's descriptors 3
// and 4 (listening sockets handed to haproxy's `bind fd@3` / `fd@4`); no other descriptor of
// this process is inherited unless it lacks O_CLOEXEC. -1 when fork fails.
pid_t spawn_child(const std::vector<std::string>& args, bool quiet = false,
                  const std::string& stderr_file = "", int fd3 = -1, int fd4 = -1);

// Polls `ready` every `poll` until it holds. kUnavailable naming `what` when the child exits
// first (pid becomes -1) or `timeout` passes (the child is left to its owner to stop).
Status wait_until_ready(pid_t& pid, const std::function<bool()>& ready,
                        std::chrono::milliseconds timeout, const std::string& what,
                        std::chrono::milliseconds poll = std::chrono::milliseconds(20));

// Sends `sig` and reaps the child; its wait status, or -1 when `pid` <= 0. `pid` becomes -1.
int stop_child(pid_t& pid, int sig = 15);

}  // namespace privsearch::server
