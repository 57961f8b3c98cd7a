// The provider's gRPC service over TLS (DESIGN.md section 8): forwards GetServerInfo, UploadKeys
// and Rerank to a ProviderCore and the PIR RPCs to a PirService, and adds what only the transport
// can do — the message-size cap (gRPC refuses larger messages with RESOURCE_EXHAUSTED before
// parsing them), a bound on concurrent requests (beyond it: Error OVERLOADED), a worker pool sized
// to the cores, and graceful shutdown. gRPC types stay behind this header. Thread safety:
// start/port/shutdown/wait from the owning thread; the service itself is concurrent.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/status.h"
#include "net/tls.h"
#include "protocol/identities.h"
#include "protocol/pir_service.h"
#include "protocol/provider_core.h"

namespace grpc {
class Channel;
class ClientContext;
}  // namespace grpc

namespace privsearch::server {

// What the transport enforces before a request reaches the service (all reported in ServerInfo).
// gRPC 1.51 has no cap on connections; a front load balancer (HAProxy maxconn, per-source
// stick tables) caps connections in total and per peer, and the memory quota below bounds what
// any number of connections can make the provider buffer.
struct TransportLimits {
  // gRPC's resource quota: all connection and message buffers together. Under pressure gRPC
  // shrinks flow-control windows, so unfinished messages cannot pile up past it.
  std::uint64_t memory_bytes = std::uint64_t{256} << 20;
  std::uint32_t max_streams_per_connection = 32;  // concurrent HTTP/2 streams
  int keepalive_time_ms = 60000;                  // ping an idle peer this often ...
  int keepalive_timeout_ms = 20000;               // ... and drop it when the ping is not answered
  int max_connection_idle_ms = 300000;            // close a connection without calls this long
  // A connection is retired (GOAWAY) at this age and closed `grace` later, whatever its streams
  // are doing: the longest a client can take to send a whole message is age + grace.
  int max_connection_age_ms = 300000;
  int max_connection_age_grace_ms = 30000;
  int handshake_timeout_ms = 10000;  // TLS + HTTP/2 handshake
};

struct ServeOptions {
  std::string listen = "127.0.0.1:0";          // port 0: pick a free port (see port())
  const net::TlsIdentity* identity = nullptr;  // required unless insecure_loopback
  bool insecure_loopback = false;              // plaintext; only accepted for 127.0.0.1 / [::1]
  // `listen` = "unix:PATH" is plaintext too (local only). behind_front: that socket is the
  // HTTP/2 front's (server/http2_front.h) and the caller's address is the front's
  // x-privsearch-peer header, so per-address limits hold for the real clients.
  bool behind_front = false;
  unsigned threads = 0;  // 0: hardware concurrency
  // Called once per request with one JSON object (rpc, outcome code, K, bytes in/out, provider
  // ms). It carries no key, query, candidate or score material. Empty: no request log.
  std::function<void(const std::string&)> request_log;
  // Private payload fetch; null: the PIR RPCs answer PIR_UNAVAILABLE. Must outlive the server.
  protocol::PirBackend* pir = nullptr;
  // Private IVF list fetch (PirDatabase PIR_DATABASE_IVF_LISTS); null: PIR_UNAVAILABLE.
  protocol::PirBackend* pir_lists = nullptr;
  // The payload database's shared PIR state (replicas over Redis), where the owners of
  // registrations are bound cluster-wide (protocol/pir_owners.h); null: this process only.
  std::shared_ptr<protocol::PirSharedState> pir_shared;
  // Bearer tokens (protocol/identities.h); null: anonymous clients, limited per peer address.
  // When set, every RPC but GetServerInfo needs `authorization: Bearer <token>` (UNAUTHENTICATED
  // otherwise). Must outlive the server.
  const protocol::TokenRegistry* tokens = nullptr;
  TransportLimits transport;
  // Requests one client (identity, else peer address) may have in flight: -1 = half the worker
  // threads (at least 1), 0 = no per-client limit (behind a load balancer without identities
  // every client shares its address).
  int max_concurrent_per_client = -1;
  // Index versions answered after reloads: the current one and up to keep_versions - 1
  // previous ones (their cores, and so their exact stores and scoring matrices, stay loaded).
  // A Rerank or PrivateScore for a version that was served here and has been retired gets
  // ARTIFACT_STALE naming the newest version; an unknown version WRONG_ARTIFACT_VERSION.
  unsigned keep_versions = 2;
};

class ProviderServer {
 public:
  // `core` must outlive the server. Errors: kInvalidArgument (no identity, plaintext on a
  // non-loopback address), kUnavailable (cannot bind).
  static Result<std::unique_ptr<ProviderServer>> start(protocol::ProviderCore& core,
                                                       const ServeOptions& options);
  // Shared ownership, so replace_core() can retire a core once its last request finishes.
  static Result<std::unique_ptr<ProviderServer>> start(std::shared_ptr<protocol::ProviderCore> core,
                                                       const ServeOptions& options);
  // A reloaded index (SIGHUP in privsearch-provider): new requests use `core`; requests naming
  // a retained previous version still go to its core (ServeOptions::keep_versions).
  void replace_core(std::shared_ptr<protocol::ProviderCore> core);
  ~ProviderServer();
  ProviderServer(const ProviderServer&) = delete;
  ProviderServer& operator=(const ProviderServer&) = delete;

  int port() const;
  // A channel to this server inside the process (the browser endpoint's, server/web_gateway.h):
  // its calls meet the same service, limits and log. The service believes a call's peer header
  // (kFrontPeerHeader) only when mark_in_process() has tagged it.
  std::shared_ptr<grpc::Channel> in_process_channel();
  void mark_in_process(grpc::ClientContext& context) const;
  // Stops accepting, lets in-flight requests finish for up to `grace_ms`, then cancels them.
  void shutdown(int grace_ms = 5000);
  void wait();

  struct Impl;

 private:
  explicit ProviderServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace privsearch::server
