// The provider's browser endpoint (HTTP/1.1 over TLS, beside the gRPC port): browsers cannot
// speak gRPC's HTTP/2 trailers, so each Provider RPC is also served as
//   POST /privsearch.v1.Provider/<Method>   body: the request message (protobuf, binary)
//                                            answer: 200 + the response message, or a JSON
//                                            {"code", "message"} for a transport refusal
// (Apple's PIR service speaks the same HTTP + protobuf). Every call is forwarded, bytes
// unchanged, through an in-process gRPC channel to the same service, so it meets the same
// admission path: message-size cap, bearer token (the Authorization header), in-flight and
// per-client limits, budgets, typed errors and the one request-log line (the browser's address
// is the caller's, passed as the front's peer header, which the service believes only on the
// in-process channel). Also served, for the page: GET /index/<file> — the index's PUBLIC client
// files only (manifest, signature, projection, PQ codes, encoder, payload titles; never the
// exact store, the scoring matrix or the lists), and GET / — the page (web_root).
// CORS: only the configured origins get Access-Control-Allow-Origin (the page's own origin needs
// none). Every request's head is checked before its body is read or a header reaches gRPC
// (server/web_request_policy.h: no transfer or content coding, the body cap, one byte range,
// printable Authorization, POSTs only from the endpoint's own or a configured origin and only as
// application/x-protobuf). Limits of its own: read/write timeouts, deadlines per phase of a
// connection and on its life, keep-alive bounds, a fixed pool of connection threads with a
// bounded accept queue, and file transfers capped in total (half the threads, so calls always
// find one) and per client; files are streamed from disk, never held whole in memory
// (docs/SECURITY.md "The browser endpoint").
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "net/tls.h"
#include "protocol/identities.h"
#include "server/provider_server.h"

namespace privsearch::server {

struct WebOptions {
  std::string listen = "127.0.0.1:0";  // host:port; port 0 picks a free one
  // Behind the provider's front (server/http2_front.h BrowserFrontSpec): listen on this unix
  // socket instead of `listen` (still TLS: the front connects with TLS) and take each
  // browser's address from the front's kFrontPeerHeader. Empty: face the network on `listen`.
  std::filesystem::path unix_socket;
  const net::TlsIdentity* identity = nullptr;  // required: the page runs in a secure context
  // The served index's public file of a name (index::public_index_file bound to the index
  // and the public artifact names); kNotFound for any other name. Null: no /index/.
  std::function<Result<std::filesystem::path>(const std::string& file)> public_file;
  std::filesystem::path web_root;            // the page (index.html, privsearch.js, wasm)
  std::vector<std::string> allowed_origins;  // CORS; empty: same-origin only
  // Proxies (addresses or CIDRs) whose X-Forwarded-For names the client; nobody else's is read.
  std::vector<std::string> trusted_proxies;
  // With tokens, the index's files need a known bearer token too (as the calls do); null: the
  // public files are public.
  const protocol::TokenRegistry* tokens = nullptr;
  std::uint64_t max_body_bytes = std::uint64_t{64} << 20;  // the provider's message cap
  unsigned threads = 16;  // connections served at once (each one thread)
  unsigned queued = 64;   // accepted connections waiting for a thread; beyond: accept waits
  unsigned file_transfers_per_client = 2;  // index files one client may be reading at once
  int read_timeout_s = 10;                 // the longest wait for one read of a request
  int write_timeout_s = 10;
  int keep_alive_s = 5;      // an idle kept-alive connection is closed after this
  int rpc_deadline_s = 120;  // one forwarded call
  // Whole phases, however the bytes trickle (server/connection_deadlines.h): the TLS handshake
  // and a request's head; a request's body and its answer (a forwarded call adds
  // rpc_deadline_s, a file its size at min_transfer_bytes_per_s); any connection's life.
  int head_deadline_s = 10;
  int transfer_deadline_s = 60;
  std::uint64_t min_transfer_bytes_per_s = std::uint64_t{64} << 10;
  int connection_lifetime_s = 600;
};

class WebGateway {
 public:
  // kInvalidArgument: no identity, a bad listen address; kUnavailable: cannot bind.
  static Result<std::unique_ptr<WebGateway>> start(ProviderServer& server,
                                                   const WebOptions& options);
  ~WebGateway();
  WebGateway(const WebGateway&) = delete;
  WebGateway& operator=(const WebGateway&) = delete;

  int port() const;
  void stop();
  // Connections shut down at a phase deadline so far.
  std::uint64_t connections_cut() const;

  struct Impl;

 private:
  explicit WebGateway(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The RPCs the endpoint forwards (every Provider method).
const std::vector<std::string>& web_rpc_methods();

}  // namespace privsearch::server
