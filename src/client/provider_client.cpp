#include "client/provider_client.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/security/credentials.h>

#include <cctype>
#include <chrono>
#include <thread>

#include "core/csprng.h"
#include "core/secure_buffer.h"
#include "net/tls.h"
#include "protocol/privsearch.grpc.pb.h"

namespace privsearch::client {
namespace {

bool is_loopback_host(const std::string& host) {
  return host == "127.0.0.1" || host == "::1" || host == "localhost";
}

// gRPC says RESOURCE_EXHAUSTED both for a message above a size limit and for a server out of
// threads or memory; only its text tells them apart.
bool is_size_limit(const grpc::Status& s) {
  const auto& m = s.error_message();
  return m.find("larger than max") != std::string::npos ||
         m.find("message size") != std::string::npos || m.find("Message size") != std::string::npos;
}

// Worth another try after a pause: the provider was unreachable or out of resources, not the
// request at fault. "Stream removed" (UNKNOWN) is gRPC's word for a stream the other side reset
// without a status: the provider's front does that to a stream whose provider connection gRPC
// dropped under memory pressure (measured in `bench abuse --class stalled_streams`).
bool is_transient(const grpc::Status& s) {
  return s.error_code() == grpc::StatusCode::UNAVAILABLE ||
         (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED && !is_size_limit(s)) ||
         (s.error_code() == grpc::StatusCode::UNKNOWN &&
          s.error_message().find("Stream removed") != std::string::npos);
}

Status from_grpc(const grpc::Status& s, const char* call) {
  const std::string what = std::string(call) + ": " + s.error_message();
  switch (s.error_code()) {
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return Status(StatusCode::kResourceExhausted,
                    what + (is_size_limit(s) ? " (message above the size limit)"
                                             : " (the provider is out of resources; retry later)"));
    case grpc::StatusCode::INVALID_ARGUMENT:
      return Status(StatusCode::kInvalidArgument, what);
    case grpc::StatusCode::UNIMPLEMENTED:
      return Status(StatusCode::kFailedPrecondition, what + " (not a privsearch provider?)");
    default:
      return Status(StatusCode::kUnavailable, what);
  }
}

// The provider's certificate, for pinning. A failed connect or handshake is retried after 50,
// 100, 200, 400, 800 ms (~1.5 s in all, like the RPCs' transport retries): behind a balancer a
// replica that just died is still routed to until its health checks fail, and its front may
// accept a connection and close it while it goes down.
Result<std::string> fetch_certificate_retrying(const ConnectOptions& options) {
  Result<std::string> pem = net::fetch_server_certificate(options.host, options.port);
  for (int attempt = 0; attempt < 5 && !pem.ok() && pem.status().code() == StatusCode::kUnavailable;
       ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50 << attempt));
    pem = net::fetch_server_certificate(options.host, options.port);
  }
  return pem;
}

}  // namespace

std::string normalize_fingerprint(const std::string& fingerprint) {
  std::string out;
  for (const char c : fingerprint) {
    if (std::isxdigit(static_cast<unsigned char>(c))) {
      out.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    }
  }
  return out;
}

struct ProviderClient::Impl {
  std::unique_ptr<v1::Provider::Stub> stub;
  int deadline_ms = 30000;
  std::string bearer_token;  // a bearer secret: wiped with the client
  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() { secure_zero(bearer_token.data(), bearer_token.size()); }

  // One call within the deadline, retried after jittered, doubling pauses (10, 20, 40, ... ms,
  // each times a uniform factor in [0.5, 1.5)) while the deadline leaves room:
  //  - the provider's OVERLOADED refusal, up to kOverloadRetries times (~2.5 s in all, several
  //    requests' time ahead in its queue); it is given before any work, so every RPC may retry;
  //  - when `retry`, transient transport failures (unreachable, out of resources), up to
  //    kTransportRetries times (~5 s: long enough for a balancer on a loaded machine to take a
  //    killed replica and its dying front out and reconnect elsewhere, short enough that a wrong
  //    address fails soon); calls that must not run twice pass retry = false.
  template <class Req, class Resp, class Call>
  Result<Resp> invoke(const Req& request, Call call, const char* name, bool retry = true) {
    constexpr int kOverloadRetries = 8, kTransportRetries = 9;
    const auto until = std::chrono::system_clock::now() + std::chrono::milliseconds(deadline_ms);
    thread_local Prng jitter = Prng::create();  // the pauses only (a ProviderClient is shared)
    int overloads = 0, failures = 0;
    for (int attempt = 0;; ++attempt) {
      grpc::ClientContext context;
      context.set_deadline(until);
      if (!bearer_token.empty()) {
        // gRPC copies the header into its own buffers (not ours to wipe); our copy goes now.
        std::string header = "Bearer " + bearer_token;
        context.AddMetadata("authorization", header);
        secure_zero(header.data(), header.size());
      }
      Resp response;
      const grpc::Status s = (stub.get()->*call)(&context, request, &response);
      const double pause_ms = 10.0 * static_cast<double>(1 << std::min(attempt, 10));
      const bool room = std::chrono::system_clock::now() +
                            std::chrono::microseconds(static_cast<long>(pause_ms * 1500)) <
                        until;
      if (s.ok()) {
        bool overloaded = false;
        if constexpr (requires { response.error().code(); }) {  // ServerInfo carries no error
          overloaded = response.has_error() && response.error().code() == v1::OVERLOADED;
        }
        if (!overloaded || !room || overloads++ == kOverloadRetries) return response;
      } else if (!retry || !is_transient(s) || !room || failures++ == kTransportRetries) {
        return from_grpc(s, name);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(
          static_cast<long>(pause_ms * (500 + static_cast<double>(jitter.uniform_below(1000))))));
    }
  }
};

ProviderClient::ProviderClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ProviderClient::~ProviderClient() = default;

Result<std::unique_ptr<ProviderClient>> ProviderClient::connect(const ConnectOptions& options) {
  if (options.port == 0) return Status(StatusCode::kInvalidArgument, "provider port missing");
  const std::string target =
      (options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host) +
      ":" + std::to_string(options.port);
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (options.insecure_loopback) {
    if (!is_loopback_host(options.host)) {
      return Status(StatusCode::kInvalidArgument,
                    "plaintext transport is only allowed to a loopback provider");
    }
    credentials = grpc::InsecureChannelCredentials();
  } else {
    std::string roots = options.ca_pem;
    if (roots.empty()) {
      if (options.pinned_fingerprint.empty()) {
        return Status(StatusCode::kInvalidArgument,
                      "verify the provider with a CA file or a pinned certificate fingerprint");
      }
      PRIVSEARCH_ASSIGN_OR_RETURN(auto pem, fetch_certificate_retrying(options));
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto fp, net::certificate_fingerprint(pem));
      if (normalize_fingerprint(fp) != normalize_fingerprint(options.pinned_fingerprint)) {
        return Status(StatusCode::kFailedPrecondition, "the provider's certificate fingerprint " +
                                                           fp + " does not match the pinned one");
      }
      roots = std::move(pem);  // the pinned self-signed certificate is its own root
    }
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = roots;
    credentials = grpc::SslCredentials(ssl);
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(static_cast<int>(options.max_message_bytes));
  args.SetMaxSendMessageSize(static_cast<int>(options.max_message_bytes));
  // gRPC's own reconnect backoff starts at 1 s and grows by 1.6x, and while it waits every call
  // fails at once: two refused connects (a balancer that has not yet seen a replica die) would
  // outlast invoke()'s ~2.5 s of transport retries without one real attempt. Reconnects at
  // invoke()'s own cadence instead: 50 ms at first, never more than 1 s apart.
  // GRPC_ARG_MIN_RECONNECT_BACKOFF_MS is not a backoff in gRPC 1.51: it is the least time one
  // connection attempt (TCP, TLS, HTTP/2 settings) may take before it is abandoned ("tcp
  // handshaker shutdown"), at least 100 ms. At 50 it was 100 ms, which a handshake through a
  // balancer and a replica's front can exceed on a loaded machine, every attempt failing: 5 s.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 50);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 5000);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  auto channel = grpc::CreateCustomChannel(target, credentials, args);
  auto impl = std::make_unique<Impl>();
  impl->stub = v1::Provider::NewStub(channel);
  impl->deadline_ms = options.deadline_ms;
  impl->bearer_token = options.bearer_token;
  return std::unique_ptr<ProviderClient>(new ProviderClient(std::move(impl)));
}

Result<v1::ServerInfo> ProviderClient::server_info() {
  return impl_->invoke<v1::ServerInfoRequest, v1::ServerInfo>(
      v1::ServerInfoRequest(), &v1::Provider::Stub::GetServerInfo, "GetServerInfo");
}

Result<v1::UploadKeysResponse> ProviderClient::upload_keys(const v1::UploadKeysRequest& request) {
  return impl_->invoke<v1::UploadKeysRequest, v1::UploadKeysResponse>(
      request, &v1::Provider::Stub::UploadKeys, "UploadKeys");
}

Result<v1::RerankResponse> ProviderClient::rerank(const v1::RerankRequest& request) {
  return impl_->invoke<v1::RerankRequest, v1::RerankResponse>(request, &v1::Provider::Stub::Rerank,
                                                              "Rerank");
}

Result<v1::PrivateScoreResponse> ProviderClient::private_score(
    const v1::PrivateScoreRequest& request) {
  // Idempotent for the provider (nothing is consumed): transport failures are retried.
  return impl_->invoke<v1::PrivateScoreRequest, v1::PrivateScoreResponse>(
      request, &v1::Provider::Stub::PrivateScore, "PrivateScore");
}

Result<v1::FetchListsResponse> ProviderClient::fetch_lists(const v1::FetchListsRequest& request) {
  // Static bytes: transport failures are retried.
  return impl_->invoke<v1::FetchListsRequest, v1::FetchListsResponse>(
      request, &v1::Provider::Stub::FetchLists, "FetchLists");
}

Result<v1::PirInfo> ProviderClient::pir_info(v1::PirDatabase database) {
  v1::PirInfoRequest request;
  request.set_database(database);
  return impl_->invoke<v1::PirInfoRequest, v1::PirInfo>(request, &v1::Provider::Stub::GetPirInfo,
                                                        "GetPirInfo");
}

Result<v1::PirSetupResponse> ProviderClient::pir_setup(const v1::PirSetupRequest& request) {
  return impl_->invoke<v1::PirSetupRequest, v1::PirSetupResponse>(
      request, &v1::Provider::Stub::PirSetup, "PirSetup");
}

Result<v1::PirStatusResponse> ProviderClient::pir_status(const v1::PirStatusRequest& request) {
  return impl_->invoke<v1::PirStatusRequest, v1::PirStatusResponse>(
      request, &v1::Provider::Stub::PirStatus, "PirStatus");
}

Result<v1::PirQueryResponse> ProviderClient::pir_query(const v1::PirQueryRequest& request) {
  // Transport failures are not retried here: a query consumes a one-time hint, so a lost
  // response is the fetcher's to handle (it knows the query index). OVERLOADED still is.
  return impl_->invoke<v1::PirQueryRequest, v1::PirQueryResponse>(
      request, &v1::Provider::Stub::PirQuery, "PirQuery", /*retry=*/false);
}

}  // namespace privsearch::client
