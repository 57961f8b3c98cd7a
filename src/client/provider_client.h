// The client's connection to a provider: gRPC over TLS with the server certificate verified
// against a CA file or a pinned SHA-256 fingerprint (DESIGN.md section 8). Transport failures
// become Status codes (kUnavailable: unreachable or deadline; kResourceExhausted: a message
// above the provider's size cap, or a provider out of resources, the text says which;
// kFailedPrecondition: certificate pin mismatch), after up to five jittered retries of the
// transient ones (unreachable, out of resources) within the deadline, except for PirQuery; the
// provider's typed refusals arrive as v1::Error inside the responses, OVERLOADED only once up to
// eight jittered retries (~2.5 s) within the deadline did not get the request in.
// Thread safety: one ProviderClient may be used from several threads (gRPC stubs are).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"
#include "protocol/privsearch.pb.h"

namespace privsearch::client {

struct ConnectOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::string ca_pem;              // trust this CA (or self-signed certificate)
  std::string pinned_fingerprint;  // or: fetch the certificate and require this SHA-256
  bool insecure_loopback = false;  // plaintext; loopback hosts only
  int deadline_ms = 30000;         // per call
  std::uint64_t max_message_bytes = 64u << 20;
  // Sent as `authorization: Bearer <token>` on every call when not empty (providers started
  // with --auth-tokens require one). Only ever sent over TLS or to a loopback provider.
  std::string bearer_token;
};

class ProviderClient {
 public:
  static Result<std::unique_ptr<ProviderClient>> connect(const ConnectOptions& options);
  ~ProviderClient();
  ProviderClient(const ProviderClient&) = delete;
  ProviderClient& operator=(const ProviderClient&) = delete;

  Result<v1::ServerInfo> server_info();
  Result<v1::UploadKeysResponse> upload_keys(const v1::UploadKeysRequest& request);
  Result<v1::RerankResponse> rerank(const v1::RerankRequest& request);
  Result<v1::PirInfo> pir_info(v1::PirDatabase database = v1::PIR_DATABASE_PAYLOADS);
  Result<v1::PirSetupResponse> pir_setup(const v1::PirSetupRequest& request);
  Result<v1::PirStatusResponse> pir_status(const v1::PirStatusRequest& request);
  Result<v1::PirQueryResponse> pir_query(const v1::PirQueryRequest& request);
  Result<v1::PrivateScoreResponse> private_score(const v1::PrivateScoreRequest& request);
  Result<v1::FetchListsResponse> fetch_lists(const v1::FetchListsRequest& request);

  struct Impl;

 private:
  explicit ProviderClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Normalizes a fingerprint for comparison: upper-case hex without separators.
std::string normalize_fingerprint(const std::string& fingerprint);

}  // namespace privsearch::client
