#include "server/http2_front.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>

#include "server/browser_front.h"
#include "server/child_process.h"

namespace privsearch::server {
namespace {

// Runs `args` to completion with stdout and stderr to `log` (and `fd3`, `fd4` as its
// descriptors 3 and 4);
// its exit status (-1: not run).
int run_to_completion(const std::vector<std::string>& args, const std::filesystem::path& log,
                      int fd3, int fd4) {
  pid_t pid = spawn_child(args, /*quiet=*/false, log.string(), fd3, fd4);
  int st = 0;
  if (pid < 0 || ::waitpid(pid, &st, 0) != pid) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// The last lines haproxy wrote (its reason for refusing), for the error message.
std::string tail_of(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream all;
  all << in.rdbuf();
  std::string text = all.str();
  if (text.size() > 600) text = text.substr(text.size() - 600);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text.empty() ? "no output" : text;
}

// Every front connection can hold one provider connection (http-reuse never), so the front's
// cap must stay below the provider's own descriptor limit, or a flood of one-request
// connections would run the provider out of descriptors (gRPC 1.51 then stops accepting for
// good, CVE-2023-4785); haproxy, which inherits the limit, needs two per connection. The
// provider raises its soft limit to the hard one at start (tools/provider/main.cpp).
unsigned connections_the_fd_limit_allows(unsigned wanted) {
  rlimit nofile{};
  if (::getrlimit(RLIMIT_NOFILE, &nofile) != 0) return wanted;
  const rlim_t soft = nofile.rlim_cur == RLIM_INFINITY ? rlim_t{1} << 20 : nofile.rlim_cur;
  const rlim_t usable = soft > 400 ? (soft - 256) / 2 : 64;
  return static_cast<unsigned>(std::min<rlim_t>(wanted, usable));
}

// A connected unix-socket descriptor to `socket_path`, or -1.
int connect_unix(const std::filesystem::path& socket_path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string path = socket_path.string();
  if (fd < 0 || path.size() >= sizeof(addr.sun_path)) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool accepts_unix_connections(const std::filesystem::path& socket_path) {
  const int fd = connect_unix(socket_path);
  if (fd >= 0) ::close(fd);
  return fd >= 0;
}

// One command on haproxy's runtime socket (non-interactive: one command, then haproxy closes):
// its whole answer, read within 5 s.
Result<std::string> runtime_command(const std::filesystem::path& socket_path,
                                    const std::string& command) {
  const int fd = connect_unix(socket_path);
  if (fd < 0) {
    return Status(StatusCode::kUnavailable,
                  "cannot reach haproxy's runtime socket " + socket_path.string());
  }
  std::size_t sent = 0;
  while (sent < command.size()) {
    const ssize_t n = ::send(fd, command.data() + sent, command.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  std::string answer;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  char buf[4096];
  while (sent == command.size() && std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    answer.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (sent != command.size()) {
    return Status(StatusCode::kUnavailable, "haproxy's runtime socket closed mid-command");
  }
  return answer;
}

Status write_private_file(const std::filesystem::path& file, std::string& text) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Status(StatusCode::kUnavailable, "cannot write " + file.string());
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  OPENSSL_cleanse(text.data(), text.size());
  if (done != text.size()) return Status(StatusCode::kUnavailable, "short write " + file.string());
  return Status();
}

// Connections counted per client address. A trusted balancer's connection carries the client's
// address in a PROXY v2 header, read after the connection rules: it is counted at the session
// rules instead (src is the client's there), and only a trusted source may send one.
std::string per_source_rules(const FrontLimits& l) {
  if (l.trusted_proxies.empty()) {
    return fmt::format(
        "  tcp-request connection track-sc0 src,ipmask(32,64)\n"
        "  tcp-request connection reject if {{ sc0_conn_cur gt {0} }} || "
        "{{ sc0_conn_rate gt {1} }}\n",
        l.max_connections_per_source, l.max_connection_rate_per_source);
  }
  std::string sources;
  for (const auto& p : l.trusted_proxies) sources += " " + p;
  return fmt::format(
      "  acl from_balancer src{1}\n"
      "  tcp-request connection expect-proxy layer4 if from_balancer\n"
      "  tcp-request connection track-sc0 src,ipmask(32,64) if !from_balancer\n"
      "  tcp-request connection reject if {{ sc0_conn_cur gt {0} }} || "
      "{{ sc0_conn_rate gt {2} }}\n"
      "  tcp-request session track-sc0 src,ipmask(32,64)\n"
      "  tcp-request session reject if {{ sc0_conn_cur gt {0} }} || {{ sc0_conn_rate gt {2} }}\n",
      l.max_connections_per_source, sources, l.max_connection_rate_per_source);
}

}  // namespace

std::filesystem::path find_haproxy() {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/sbin:/usr/bin:/sbin:/bin";
  // Debian installs it in /usr/sbin, which a non-root PATH often lacks.
  std::string all = std::string(dirs) + ":/usr/sbin:/usr/local/sbin";
  std::string_view rest = all;
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const std::filesystem::path candidate =
        std::filesystem::path(std::string(rest.substr(0, colon))) / "haproxy";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return {};
}

std::string front_config(const FrontSpec& spec, const std::filesystem::path& pem_file) {
  const FrontLimits& l = spec.limits;
  const unsigned maxconn = connections_the_fd_limit_allows(l.max_connections);
  return fmt::format(
      "# privsearch provider front: TLS ends here, each gRPC stream goes on over HTTP/2 to the\n"
      "# provider's unix socket. Generated by privsearch-provider (server/http2_front.h).\n"
      "global\n"
      "  maxconn {maxconn}                  # connections in total\n"
      "  tune.bufsize {bufsize}             # one request's whole header block must fit:\n"
      "                                     # endless CONTINUATION frames end here\n"
      "  tune.h2.max-concurrent-streams {streams}\n"
      "  tune.h2.header-table-size 4096     # the HPACK table a client may make us keep\n"
      "  ssl-default-bind-options ssl-min-ver TLSv1.2 no-tls-tickets\n"
      "  # runtime API, owner only (0600 in a 0700 directory): the readiness probe, and how the\n"
      "  # certificate and key arrive, in memory (set/commit ssl cert)\n"
      "  stats socket {admin} mode 600 level admin\n"
      "\n"
      "defaults\n"
      "  mode http\n"
      "  timeout connect 2s\n"
      "  timeout http-request {header_s}s      # a request's headers complete within this\n"
      "  timeout client {client_s}s            # a client that neither sends nor reads\n"
      "  timeout server {server_s}s           # the provider's longest answer\n"
      "  timeout http-keep-alive {idle_s}s    # a connection without streams\n"
      "  timeout client-fin 5s\n"
      "  timeout server-fin 5s\n"
      "\n"
      "frontend privsearch\n"
      "  bind fd@3 ssl crt {pem} alpn h2\n"
      "  maxconn {maxconn}\n"
      "  # open connections and new ones per 10 s of each client address: IPv4 by address, IPv6\n"
      "  # by /64 (what one host gets), stored as IPv6\n"
      "  stick-table type ipv6 size 100k expire 60s store conn_cur,conn_rate(10s)\n"
      "{source_rules}"
      "  # the client's address for the provider's per-address limits: set, never appended, so\n"
      "  # a client's own header of this name is replaced\n"
      "  http-request set-header {peer_header} %[src]\n"
      "  # the provider's in-process marker never comes from outside\n"
      "  http-request del-header {in_process_header}\n"
      "  default_backend provider\n"
      "\n"
      "backend provider\n"
      "  http-reuse never                   # a provider connection per client connection\n"
      "  server provider unix@{socket} proto h2\n"
      "{browser}",
      fmt::arg("maxconn", maxconn), fmt::arg("bufsize", l.header_buffer_bytes),
      fmt::arg("streams", l.max_streams_per_connection),
      fmt::arg("header_s", l.request_header_timeout_s), fmt::arg("client_s", l.client_timeout_s),
      fmt::arg("server_s", l.server_timeout_s), fmt::arg("idle_s", l.idle_timeout_s),
      fmt::arg("pem", pem_file.string()), fmt::arg("per_source", l.max_connections_per_source),
      fmt::arg("peer_header", kFrontPeerHeader), fmt::arg("in_process_header", kInProcessTagHeader),
      fmt::arg("source_rules", per_source_rules(l)),
      fmt::arg("socket", spec.backend_socket.string()),
      fmt::arg("admin", (spec.run_dir / "front.admin").string()),
      fmt::arg("browser", spec.browser.listen_fd >= 0
                              ? detail::browser_config(spec.browser, pem_file, maxconn,
                                                       per_source_rules(spec.limits))
                              : ""));
}

Result<std::unique_ptr<Http2Front>> Http2Front::start(const FrontSpec& spec,
                                                      const net::TlsIdentity& identity) {
  const auto haproxy = find_haproxy();
  if (haproxy.empty()) {
    return Status(StatusCode::kUnavailable,
                  "the provider's front needs haproxy (apt-get install haproxy), or run with "
                  "--front none to serve gRPC directly (without the front's protections)");
  }
  // The identity's key never touches the disk: haproxy starts on a throwaway certificate (a
  // fresh self-signed one whose key protects nothing) and receives the identity over its
  // owner-only runtime socket, in memory, before the provider calls itself ready.
  const auto pem = spec.run_dir / "front.pem";
  const auto cfg = spec.run_dir / "front.cfg";
  const auto log = spec.run_dir / "front.log";
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto placeholder,
                              net::make_self_signed("privsearch-front-starting", 1));
  std::string pem_text = placeholder.certificate_pem() + placeholder.private_key_pem();
  PRIVSEARCH_RETURN_IF_ERROR(write_private_file(pem, pem_text));
  struct RemovedOnReturn {
    const std::filesystem::path& file;
    ~RemovedOnReturn() { std::filesystem::remove(file); }
  } placeholder_file{pem};  // loaded once haproxy runs, or never
  std::string cfg_text = front_config(spec, pem);
  PRIVSEARCH_RETURN_IF_ERROR(write_private_file(cfg, cfg_text));
  // The check needs the socket too: haproxy -c verifies that `fd@3` is one.
  if (run_to_completion({haproxy.string(), "-c", "-f", cfg.string()}, log, spec.listen_fd,
                        spec.browser.listen_fd) != 0) {
    return Status(StatusCode::kUnavailable, "haproxy refused the front's configuration " +
                                                cfg.string() + ": " + tail_of(log));
  }
  std::unique_ptr<Http2Front> front(new Http2Front());
  front->pid_ = spawn_child({haproxy.string(), "-db", "-q", "-m",
                             std::to_string(spec.limits.memory_mb), "-f", cfg.string()},
                            /*quiet=*/true, log.string(), spec.listen_fd, spec.browser.listen_fd);
  if (front->pid_ < 0) return Status(StatusCode::kUnavailable, "fork failed for haproxy");
  front->admin_ = spec.run_dir / "front.admin";
  front->certificate_name_ = pem;
  // haproxy enables its runtime socket together with its frontends, once the configuration and
  // the certificate are loaded; a TLS probe of the public socket would not do (with a trusted
  // balancer on loopback, a connection from there must start with PROXY v2).
  const Status ready = wait_until_ready(
      front->pid_, [&] { return accepts_unix_connections(front->admin_); },
      std::chrono::seconds(10), "haproxy (the provider's front)", std::chrono::milliseconds(20));
  if (!ready.ok()) return Status(ready.code(), ready.message() + ": " + tail_of(log));
  PRIVSEARCH_RETURN_IF_ERROR(front->install_identity(identity));
  return front;
}

Status Http2Front::install_identity(const net::TlsIdentity& identity) {
  // Built in one buffer (no temporaries holding the key) and wiped after sending; the payload
  // ends at the first empty line, which PEM never has.
  const std::string head = "set ssl cert " + certificate_name_.string() + " <<\n";
  std::string command;
  command.reserve(head.size() + identity.certificate_pem().size() +
                  identity.private_key_pem().size() + 2);
  command.append(head).append(identity.certificate_pem()).append(identity.private_key_pem());
  command.append("\n");
  auto staged = runtime_command(admin_, command);
  OPENSSL_cleanse(command.data(), command.size());
  if (!staged.ok()) return staged.status();
  if (staged->find("Transaction") == std::string::npos) {
    return Status(StatusCode::kInvalidArgument,
                  "haproxy refused the provider's certificate: " + *staged);
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(
      const auto committed,
      runtime_command(admin_, "commit ssl cert " + certificate_name_.string() + "\n"));
  if (committed.find("Success!") == std::string::npos) {
    (void)runtime_command(admin_, "abort ssl cert " + certificate_name_.string() + "\n");
    return Status(StatusCode::kInvalidArgument,
                  "haproxy could not use the provider's certificate: " + committed);
  }
  return Status();
}

Http2Front::~Http2Front() { stop(); }

bool Http2Front::alive() {
  if (pid_ <= 0) return false;
  int st = 0;
  if (::waitpid(pid_, &st, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

void Http2Front::drain() {
  if (pid_ > 0) ::kill(pid_, SIGUSR1);
}

void Http2Front::stop() { stop_child(pid_, SIGTERM); }

Result<TcpListener> bind_tcp_listener(const std::string& host_port) {
  const auto colon = host_port.rfind(':');
  if (colon == std::string::npos || colon + 1 == host_port.size()) {
    return Status(StatusCode::kInvalidArgument,
                  "listen address must be HOST:PORT, not '" + host_port + "'");
  }
  std::string host = host_port.substr(0, colon);
  const std::string port = host_port.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found) != 0 ||
      found == nullptr) {
    return Status(StatusCode::kInvalidArgument, "cannot resolve listen address " + host_port);
  }
  TcpListener out;
  const int fd = ::socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, 0);
  const int one = 1;
  if (fd >= 0) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  const bool bound =
      fd >= 0 && ::bind(fd, found->ai_addr, found->ai_addrlen) == 0 && ::listen(fd, 4096) == 0;
  const bool v6 = found->ai_family == AF_INET6;
  ::freeaddrinfo(found);
  if (!bound) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return Status(StatusCode::kUnavailable, "cannot listen on " + host_port + ": " + why);
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  out.fd = fd;
  out.port = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                      : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  return out;
}

namespace {

constexpr const char* kOwnerLock = "owner.lock";

// Whether the run directory `dir` (privsearch-front-<pid>-*) outlived its provider. Exact when
// the directory holds its owner's lock file: the provider holds flock() on it until it exits,
// and the kernel releases it then, in whatever PID namespace the provider ran. Without one (a
// provider killed between mkdtemp and the lock, or one of an older release) by the pid in the
// name: gone means stale; a pid reused by another process keeps the directory until that
// process is gone too, so never a live provider's directory is removed.
bool outlived_its_provider(const std::filesystem::path& dir, long pid) {
  const int fd = ::open((dir / kOwnerLock).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd >= 0) {
    const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
    ::close(fd);
    return free;
  }
  return errno == ENOENT && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

// Directories of fronts whose provider died without cleaning up (SIGKILL): named
// privsearch-front-<pid>-*, ours, and outlived their provider.
void remove_stale_run_dirs(const std::filesystem::path& tmp) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(tmp, ec)) {
    const std::string name = entry.path().filename().string();
    constexpr std::string_view kPrefix = "privsearch-front-";
    if (name.rfind(kPrefix, 0) != 0) continue;
    const long pid = std::strtol(name.c_str() + kPrefix.size(), nullptr, 10);
    struct stat st {};
    if (pid <= 0 || ::lstat(entry.path().c_str(), &st) != 0 || st.st_uid != ::getuid() ||
        !S_ISDIR(st.st_mode)) {
      continue;
    }
    if (outlived_its_provider(entry.path(), pid)) std::filesystem::remove_all(entry.path(), ec);
  }
}

}  // namespace

Result<std::filesystem::path> make_private_run_dir() {
  const char* tmp = std::getenv("TMPDIR");
  const std::filesystem::path base(tmp != nullptr && *tmp != 0 ? tmp : "/tmp");
  remove_stale_run_dirs(base);
  std::string pattern =
      (base / ("privsearch-front-" + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return Status(StatusCode::kUnavailable,
                  "cannot create a private directory " + pattern + ": " + std::strerror(errno));
  }
  const std::filesystem::path dir(pattern);
  // The owner's lock, held until this process exits: the descriptor is left open on purpose
  // (close-on-exec, so the front does not inherit it).
  const int lock =
      ::open((dir / kOwnerLock).c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lock < 0 || ::flock(lock, LOCK_EX | LOCK_NB) != 0) {
    const std::string why = std::strerror(errno);
    if (lock >= 0) ::close(lock);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    return Status(StatusCode::kUnavailable,
                  "cannot lock the private directory " + pattern + ": " + why);
  }
  return dir;
}

}  // namespace privsearch::server
