#include "server/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

namespace privsearch::server {

namespace {

// In the child: `fd` becomes descriptor `target`, inherited across exec (dup2 clears O_CLOEXEC
// on the copy; when fd already is target, clear it by hand). `fd` must not be a lower target
// already placed (the caller moves it out of the way first).
bool inherit_as(int fd, int target) {
  if (fd == target) return ::fcntl(target, F_SETFD, ::fcntl(target, F_GETFD) & ~FD_CLOEXEC) == 0;
  return ::dup2(fd, target) == target;
}

}  // namespace

pid_t spawn_child(const std::vector<std::string>& args, bool quiet, const std::string& stderr_file,
                  int fd3, int fd4) {
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  // The child: die with the parent (and do not start if it already died: then the parent is
  // init or a subreaper, not the process that forked).
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) ::_exit(126);
  if (quiet) {
    const int devnull = ::open("/dev/null", O_WRONLY);
    if (devnull >= 0) ::dup2(devnull, STDOUT_FILENO);
  }
  if (!stderr_file.empty()) {
    const int fd = ::open(stderr_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd >= 0) {
      ::dup2(fd, STDERR_FILENO);
      if (!quiet) ::dup2(fd, STDOUT_FILENO);  // its log in one place
    }
  }
  // fd4 first out of the way of descriptor 3 (a copy above both), then both into place.
  if (fd4 == 3) fd4 = ::fcntl(fd4, F_DUPFD_CLOEXEC, 5);
  if (fd3 >= 0 && !inherit_as(fd3, 3)) ::_exit(126);
  if (fd4 >= 0 && !inherit_as(fd4, 4)) ::_exit(126);
  ::execvp(argv[0], argv.data());
  ::_exit(127);
}

Status wait_until_ready(pid_t& pid, const std::function<bool()>& ready,
                        std::chrono::milliseconds timeout, const std::string& what,
                        std::chrono::milliseconds poll) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (!ready()) {
    int st = 0;
    if (pid <= 0 || ::waitpid(pid, &st, WNOHANG) == pid) {
      pid = -1;
      return Status(StatusCode::kUnavailable, what + " exited at start-up");
    }
    if (std::chrono::steady_clock::now() > until) {
      return Status(StatusCode::kUnavailable, what + " did not start in time");
    }
    std::this_thread::sleep_for(poll);
  }
  return Status();
}

int stop_child(pid_t& pid, int sig) {
  if (pid <= 0) return -1;
  ::kill(pid, sig);
  int st = 0;
  ::waitpid(pid, &st, 0);
  pid = -1;
  return st;
}

}  // namespace privsearch::server
