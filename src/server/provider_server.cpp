#include "server/provider_server.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/security/server_credentials.h>

#include <algorithm>
#include <thread>

#include "server/provider_service.h"
#include "server/typed_parse.h"

namespace privsearch::server {
namespace {

bool is_loopback(const std::string& listen) {
  return listen.rfind("127.0.0.1:", 0) == 0 || listen.rfind("[::1]:", 0) == 0 ||
         listen.rfind("localhost:", 0) == 0;
}

}  // namespace

struct ProviderServer::Impl {
  std::unique_ptr<detail::ProviderService> service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
  bool stopped = false;
};

ProviderServer::ProviderServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ProviderServer::~ProviderServer() {
  if (impl_ && !impl_->stopped) shutdown(0);
}

Result<std::unique_ptr<ProviderServer>> ProviderServer::start(protocol::ProviderCore& core,
                                                              const ServeOptions& options) {
  // Not owned: the caller keeps the core alive.
  return start(std::shared_ptr<protocol::ProviderCore>(&core, [](protocol::ProviderCore*) {}),
               options);
}

std::shared_ptr<grpc::Channel> ProviderServer::in_process_channel() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);  // the server's own cap applies to requests
  return impl_->server->InProcessChannel(args);
}

void ProviderServer::mark_in_process(grpc::ClientContext& context) const {
  context.AddMetadata(kInProcessTagHeader, impl_->service->in_process_tag());
}

void ProviderServer::replace_core(std::shared_ptr<protocol::ProviderCore> core) {
  impl_->service->replace_core(std::move(core));
}

namespace {

// TLS with the identity, or plaintext on a unix socket or (insecure_loopback) loopback only.
Result<std::shared_ptr<grpc::ServerCredentials>> server_credentials(const ServeOptions& options) {
  const bool unix_socket = options.listen.rfind("unix:", 0) == 0;
  if (options.behind_front && !unix_socket) {
    return Status(StatusCode::kInvalidArgument,
                  "behind the front the provider listens on a unix socket, not " + options.listen);
  }
  if (options.insecure_loopback || unix_socket) {
    if (!unix_socket && !is_loopback(options.listen)) {
      return Status(
          StatusCode::kInvalidArgument,
          "plaintext transport is only allowed on a loopback address, not " + options.listen);
    }
    return grpc::InsecureServerCredentials();
  }
  if (options.identity == nullptr) {
    return Status(StatusCode::kInvalidArgument,
                  "the provider needs a TLS certificate and key (or --self-signed)");
  }
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back(
      {options.identity->private_key_pem(), options.identity->certificate_pem()});
  return grpc::SslServerCredentials(ssl);
}

}  // namespace

namespace {

// The per-connection transport limits (TransportLimits) as gRPC channel arguments.
void add_connection_limits(grpc::ServerBuilder& builder, const TransportLimits& t) {
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             static_cast<int>(t.max_streams_per_connection));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, t.keepalive_time_ms);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, t.keepalive_timeout_ms);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, t.max_connection_idle_ms);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS, t.max_connection_age_ms);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS, t.max_connection_age_grace_ms);
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, t.handshake_timeout_ms);
  // Ping floods: at most one ping per 10 s without data; more is a strike (2 strikes: GOAWAY).
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 10000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 2);
}

}  // namespace

Result<std::unique_ptr<ProviderServer>> ProviderServer::start(
    std::shared_ptr<protocol::ProviderCore> core_ptr, const ServeOptions& options) {
  protocol::ProviderCore& core = *core_ptr;
  const bool unix_socket = options.listen.rfind("unix:", 0) == 0;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto credentials, server_credentials(options));
  const unsigned threads =
      options.threads != 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  auto& limits = core.config().limits;
  const unsigned max_in_flight =
      limits.max_concurrent_requests != 0 ? limits.max_concurrent_requests : 8 * threads;

  auto impl = std::make_unique<Impl>();
  impl->service = std::make_unique<detail::ProviderService>(
      core_ptr, options.pir, options.pir_lists, max_in_flight, options.request_log, options.tokens,
      options.transport,
      options.max_concurrent_per_client >= 0
          ? static_cast<unsigned>(options.max_concurrent_per_client)
          : std::max(1u, threads / 2),
      threads, options.keep_versions);
  // Without tokens every caller is anonymous and nothing is ever bound: no store lookups then.
  if (options.tokens != nullptr) impl->service->share_pir_owners(options.pir_shared);
  if (options.behind_front) impl->service->trust_front_peer_header();
  // The standard gRPC health service (grpc.health.v1.Health), what load balancers and
  // orchestrators probe: SERVING while up, NOT_SERVING once shutdown() starts draining, so a
  // balancer stops routing here before the port closes. Unauthenticated on purpose (it says
  // nothing but up/down); the Provider service's calls still need a token when configured.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, credentials, &impl->port);
  builder.RegisterService(impl->service.get());
  // gRPC refuses bigger messages itself (RESOURCE_EXHAUSTED) before allocating for them.
  const auto cap = static_cast<int>(
      std::min<std::uint64_t>(limits.max_message_bytes + 4096, std::uint64_t{1} << 30));
  builder.SetMaxReceiveMessageSize(cap);
  builder.SetMaxSendMessageSize(cap);
  const auto& t = options.transport;
  grpc::ResourceQuota quota("privsearch-provider");
  // Pollers plus workers: each sync request occupies one thread while the kernel runs.
  quota.SetMaxThreads(static_cast<int>(max_in_flight + threads + 2));
  quota.Resize(static_cast<std::size_t>(t.memory_bytes));
  builder.SetResourceQuota(quota);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(typed_parse_errors());
  interceptors.push_back(impl->service->holds().interceptor());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  add_connection_limits(builder, t);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS,
                              static_cast<int>(threads));
  impl->server = builder.BuildAndStart();
  if (!impl->server || (impl->port == 0 && !unix_socket)) {
    return Status(StatusCode::kUnavailable, "cannot listen on " + options.listen);
  }
  return std::unique_ptr<ProviderServer>(new ProviderServer(std::move(impl)));
}

int ProviderServer::port() const { return impl_->port; }

void ProviderServer::shutdown(int grace_ms) {
  if (impl_->stopped) return;
  impl_->stopped = true;
  if (auto* health = impl_->server->GetHealthCheckService()) health->SetServingStatus(false);
  // gRPC's deadline-based Shutdown also waits for idle client connections until the deadline,
  // so drain the in-flight requests ourselves and then shut down at once.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_ms);
  while (impl_->service->in_flight() != 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  impl_->server->Shutdown(std::chrono::system_clock::now());
}

void ProviderServer::wait() { impl_->server->Wait(); }

}  // namespace privsearch::server
