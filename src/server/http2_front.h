// The provider's hardened HTTP/2 front: HAProxy (Debian's 2.6) in HTTP mode terminates TLS on the
// public address and forwards each gRPC stream over HTTP/2 on a unix socket to the provider,
// which listens only there. What the front adds is what gRPC 1.51 in the provider cannot hold
// (docs/SECURITY.md "Transport"; measured in tests/server/transport_attack_test.cpp):
//
//  - header blocks are assembled in one buffer of `header_buffer_bytes`; a HEADERS frame with
//    endless CONTINUATION frames is refused there (CVE-2023-33953 never reaches gRPC);
//  - connections are capped in total and per source address and an out-of-descriptors accept
//    is retried, never fatal (CVE-2023-4785: gRPC's accept loop stops for good);
//  - a response the client does not read waits in the front's buffers, not in a provider
//    thread, and the stream dies after `client_timeout_s` without progress;
//  - request headers must be complete within `request_header_timeout_s`;
//  - every client connection gets its own provider connection (`http-reuse never`), so one
//    client's stalled stream cannot block another's.
//
// The client's address reaches the provider as the header `x-privsearch-peer`, set (never
// appended) by the front; the provider believes it only on its unix socket (ServeOptions::
// behind_front). The listening socket is bound by the provider itself and inherited by haproxy
// (`bind fd@3`), so port 0 works and no other process can take the port in between.
// Thread safety: one owner.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "net/tls.h"

namespace privsearch::server {

// The header the front sets to the client's address (lower case: HTTP/2 field names are).
inline constexpr const char* kFrontPeerHeader = "x-privsearch-peer";
// The header that marks the provider's own in-process calls (ProviderServer::mark_in_process).
inline constexpr const char* kInProcessTagHeader = "x-privsearch-in-process";

struct FrontLimits {
  unsigned max_connections = 4096;           // in total (also bounded by the fd limit)
  unsigned max_connections_per_source = 64;  // open connections of one client address
  unsigned max_streams_per_connection = 32;  // concurrent HTTP/2 streams per connection
  // One request's whole header block (HEADERS + CONTINUATION) must fit this buffer; gRPC's
  // headers are ~300 B and a bearer token 64 B.
  unsigned header_buffer_bytes = 16384;
  int request_header_timeout_s = 10;  // a request's headers complete within this
  int client_timeout_s = 60;          // a client that neither sends nor reads for this long
  int server_timeout_s = 330;         // the provider's longest answer (a ZipPIR hint at 1 GiB)
  // A connection without streams (also one that has carried some: HAProxy 2.6 idles an h2
  // connection by http-keep-alive), so an attacker's idle connections free their slot soon.
  int idle_timeout_s = 15;
  // New connections per client address in 10 s: TLS handshakes cost the front CPU.
  unsigned max_connection_rate_per_source = 300;
  // The front's memory cap (haproxy -m): allocations past it fail and their connections close
  // instead of the host running out.
  unsigned memory_mb = 512;
  // Balancers in front of this replica (addresses or CIDRs): their connections must start with
  // a PROXY protocol v2 header naming the real client, whose address then counts for the
  // per-address limits here and in the provider; nobody else may send one. Empty: none.
  std::vector<std::string> trusted_proxies;
};

// The browser endpoint (server/web_gateway.h) behind the same front: HTTP/1.1 over TLS on its
// own public socket, each request forwarded to the endpoint on a unix socket in the run
// directory (over TLS: the endpoint keeps its per-phase connection deadlines), through a pool
// of at most `backend_slots` connections: idle and slow browsers wait in the front, never in one
// of the endpoint's threads. The front refuses what the endpoint's head check would
// (server/web_request_policy.h: transfer and content codings, a length over the cap, several
// ranges) before a byte reaches the provider, and sets kFrontPeerHeader to the browser's
// address (the endpoint believes it because only the front can reach that socket).
struct BrowserFrontSpec {
  int listen_fd = -1;                    // bound and listening, TCP; inherited as fd@4
  std::filesystem::path backend_socket;  // the endpoint's unix socket
  unsigned backend_slots = 16;           // the endpoint's connection threads
  // Requests of one client address inside the endpoint at once (a body being received counts):
  // beyond, 429 at once. One address trickling request bodies used to hold every slot.
  unsigned slots_per_source = 4;
  std::uint64_t max_body_bytes = 8u << 20;
  // HTTP proxies in front (--web-trust-proxy-from): their requests count for the address their
  // last X-Forwarded-For entry names, as in the endpoint (server/web_request_policy.h).
  std::vector<std::string> trusted_http_proxies;
  std::vector<std::string> allowed_origins;  // --web-origin: the front's own answers carry CORS
};

struct FrontSpec {
  int listen_fd = -1;                    // bound and listening, TCP; inherited by haproxy
  std::filesystem::path backend_socket;  // the provider's unix socket
  std::filesystem::path run_dir;         // private (0700): configuration and certificate
  FrontLimits limits;
  BrowserFrontSpec browser;  // listen_fd -1: no browser endpoint
};

// The haproxy.cfg text for `spec` with the certificate + key PEM at `pem_file` (every limit
// named in a comment).
std::string front_config(const FrontSpec& spec, const std::filesystem::path& pem_file);

class Http2Front {
 public:
  // Writes run_dir/front.cfg and a throwaway self-signed certificate and key (0600) to
  // run_dir/front.pem, checks the configuration (haproxy -c), starts haproxy, waits until its
  // runtime socket run_dir/front.admin answers (at most 10 s), deletes the placeholder and
  // installs `identity` through the runtime socket: its key is never written to a file.
  // kUnavailable naming the cause when haproxy is missing or refuses the configuration,
  // kInvalidArgument when it refuses the identity.
  static Result<std::unique_ptr<Http2Front>> start(const FrontSpec& spec,
                                                   const net::TlsIdentity& identity);
  ~Http2Front();  // stop()
  Http2Front(const Http2Front&) = delete;
  Http2Front& operator=(const Http2Front&) = delete;

  pid_t pid() const { return pid_; }
  // True while haproxy runs (reaps it when it has exited).
  bool alive();
  // Stops accepting and lets open streams finish (haproxy's soft stop, SIGUSR1).
  void drain();
  // SIGTERM and reap; idempotent.
  void stop();
  // Replaces the certificate and key haproxy serves, in memory (set + commit ssl cert on the
  // runtime socket); haproxy keeps the previous one when it refuses the new (kInvalidArgument
  // with its reason). New connections get the new identity.
  Status install_identity(const net::TlsIdentity& identity);

 private:
  Http2Front() = default;
  pid_t pid_ = -1;
  std::filesystem::path admin_;             // the runtime socket
  std::filesystem::path certificate_name_;  // the name haproxy's certificate store knows
};

// The haproxy binary found on PATH (or in /usr/sbin), or an empty path.
std::filesystem::path find_haproxy();

// A listening TCP socket (O_CLOEXEC, backlog 4096) on "HOST:PORT" / "[V6]:PORT"; port 0 picks a
// free one. kUnavailable when it cannot bind, kInvalidArgument for a malformed address.
struct TcpListener {
  int fd = -1;
  std::uint16_t port = 0;
};
Result<TcpListener> bind_tcp_listener(const std::string& host_port);

// A fresh private directory (0700) for the front's files under $TMPDIR (or /tmp), named
// privsearch-front-<pid>-XXXXXX, holding owner.lock, which this process keeps flock()ed until
// it exits. Directories of providers that died without removing theirs (SIGKILL) are removed
// first: those whose lock nobody holds (exact across PID namespaces), and those without a lock
// file whose pid is gone.
Result<std::filesystem::path> make_private_run_dir();

}  // namespace privsearch::server
