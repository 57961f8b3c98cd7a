// The Provider gRPC service behind ProviderServer (internal to src/server): every RPC but
// GetServerInfo goes through serve(), the one admission path (authenticate; for work, the
// in-flight cap, the caller's share and a worker; one log line; typed refusals), and each
// request goes to the core of the index version it names.
#pragma once

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "core/constant_time.h"
#include "core/csprng.h"
#include "protocol/pir_owners.h"
#include "protocol/privsearch.grpc.pb.h"
#include "server/admission.h"
#include "server/call_holds.h"
#include "server/http2_front.h"
#include "server/provider_server.h"

namespace privsearch::server::detail {

// The peer's address without the port: "ipv4:127.0.0.1:5000" -> "127.0.0.1",
// "ipv6:[::1]:5000" -> "::1" (rate limits are per address, not per connection).
inline std::string peer_address(const std::string& peer) {
  std::string p = peer;
  if (const auto colon = p.find(':'); colon != std::string::npos && p.rfind("ip", 0) == 0) {
    p = p.substr(colon + 1);
  }
  if (!p.empty() && p.front() == '[') {
    const auto close = p.find(']');
    return close == std::string::npos ? p : p.substr(1, close - 1);
  }
  const auto last = p.rfind(':');
  return last == std::string::npos ? p : p.substr(0, last);
}

class ProviderService final : public v1::Provider::Service {
 public:
  ProviderService(std::shared_ptr<protocol::ProviderCore> core, protocol::PirBackend* pir,
                  protocol::PirBackend* pir_lists, unsigned max_in_flight,
                  std::function<void(const std::string&)> log,
                  const protocol::TokenRegistry* tokens, const TransportLimits& transport,
                  unsigned per_client, unsigned threads, unsigned keep_versions)
      : per_client_(per_client),
        workers_(threads),
        keep_versions_(std::max(1u, keep_versions)),
        pir_(pir),
        pir_lists_(pir_lists),
        max_in_flight_(max_in_flight),
        log_(std::move(log)),
        tokens_(tokens),
        transport_(transport),
        instance_id_(to_byte_string(Prng::random_seed())),
        in_process_tag_(to_hex(Prng::random_seed())) {
    replace_core(std::move(core));
  }

  // A reloaded index becomes the current core; the previous ones stay (up to keep_versions in
  // all) for clients still on them; requests in flight finish on the core they started with.
  void replace_core(std::shared_ptr<protocol::ProviderCore> core) {
    std::lock_guard lock(core_mu_);
    const std::string version = core->config().artifact_version;
    std::erase_if(cores_, [&](const auto& c) { return c->config().artifact_version == version; });
    cores_.insert(cores_.begin(), std::move(core));
    if (cores_.size() > keep_versions_) cores_.resize(keep_versions_);
    std::erase(served_, version);
    served_.push_back(version);
    if (served_.size() > kServedHistory) served_.erase(served_.begin());
  }

  // Every Provider RPC but GetServerInfo goes through serve() (one admission path).
  grpc::Status GetPirInfo(grpc::ServerContext* context, const v1::PirInfoRequest* request,
                          v1::PirInfo* out) override {
    return serve("GetPirInfo", Admission::kAuthenticated, context, *request, out, 0,
                 [&](const protocol::Caller&) {
                   protocol::PirBackend* pir = backend(request->database());
                   return pir == nullptr ? refusal<v1::PirInfo>(unavailable(request->database()))
                                         : pir->info();
                 });
  }

  // Not on the workers: its cost is the backend's own checks, under its setup rate limit.
  grpc::Status PirSetup(grpc::ServerContext* context, const v1::PirSetupRequest* request,
                        v1::PirSetupResponse* out) override {
    return serve("PirSetup", Admission::kLogged, context, *request, out, 0,
                 [&](const protocol::Caller& caller) {
                   protocol::PirBackend* pir = backend(request->database());
                   if (pir == nullptr) {
                     return refusal<v1::PirSetupResponse>(unavailable(request->database()));
                   }
                   auto answer = pir->setup(*request, caller.rate_key());
                   if (!answer.has_error()) {
                     owners_.bind(request->database(), answer.client_id(), caller.identity);
                   }
                   return answer;
                 });
  }

  grpc::Status PirStatus(grpc::ServerContext* context, const v1::PirStatusRequest* request,
                         v1::PirStatusResponse* out) override {
    return serve(
        "PirStatus", Admission::kAuthenticated, context, *request, out, 0,
        [&](const protocol::Caller& caller) {
          protocol::PirBackend* pir = backend(request->database());
          if (pir == nullptr) {
            return refusal<v1::PirStatusResponse>(unavailable(request->database()));
          }
          if (!owners_.allowed(request->database(), request->client_id(), caller.identity)) {
            return refusal<v1::PirStatusResponse>(not_this_callers_client());
          }
          return pir->status(*request);
        });
  }

  grpc::Status PirQuery(grpc::ServerContext* context, const v1::PirQueryRequest* request,
                        v1::PirQueryResponse* out) override {
    return serve("PirQuery", Admission::kWorker, context, *request, out, 0,
                 [&](const protocol::Caller& caller) {
                   protocol::PirBackend* pir = backend(request->database());
                   if (pir == nullptr) {
                     return refusal<v1::PirQueryResponse>(unavailable(request->database()));
                   }
                   if (!owners_.allowed_query(request->database(), byte_view(request->query()),
                                              caller.identity)) {
                     return refusal<v1::PirQueryResponse>(not_this_callers_client());
                   }
                   return pir->query_from(*request, caller.rate_key());
                 });
  }

  grpc::Status GetServerInfo(grpc::ServerContext*, const v1::ServerInfoRequest*,
                             v1::ServerInfo* out) override {
    *out = core()->server_info();
    {
      std::lock_guard lock(core_mu_);
      for (std::size_t i = 1; i < cores_.size(); ++i) {
        out->add_retained_versions(cores_[i]->config().artifact_version);
      }
    }
    // The limit this transport enforces (the core's config may say 0: "8 x the threads").
    out->mutable_limits()->set_max_concurrent_requests(static_cast<std::uint32_t>(max_in_flight_));
    out->mutable_limits()->set_max_concurrent_per_client(per_client_.limit());
    if (pir_ != nullptr) {
      out->mutable_limits()->set_pir_setups_per_minute(pir_->setup_rate().per_minute);
    }
    out->mutable_limits()->set_pir_ivf_lists(pir_lists_ != nullptr);
    auto* l = out->mutable_limits();
    l->set_transport_memory_bytes(transport_.memory_bytes);
    l->set_max_streams_per_connection(transport_.max_streams_per_connection);
    l->set_connection_idle_s(static_cast<std::uint32_t>(transport_.max_connection_idle_ms / 1000));
    l->set_connection_max_age_s(
        static_cast<std::uint32_t>(transport_.max_connection_age_ms / 1000));
    l->set_message_receive_deadline_s(static_cast<std::uint32_t>(
        (transport_.max_connection_age_ms + transport_.max_connection_age_grace_ms) / 1000));
    out->set_instance_id(instance_id_);
    out->set_auth_required(tokens_ != nullptr);
    return grpc::Status::OK;
  }

  grpc::Status UploadKeys(grpc::ServerContext* context, const v1::UploadKeysRequest* request,
                          v1::UploadKeysResponse* out) override {
    return serve(
        "UploadKeys", Admission::kWorker, context, *request, out, 0,
        [&](const protocol::Caller& caller) { return core()->upload_keys(*request, caller); });
  }

  grpc::Status Rerank(grpc::ServerContext* context, const v1::RerankRequest* request,
                      v1::RerankResponse* out) override {
    return serve("Rerank", Admission::kWorker, context, *request, out,
                 static_cast<std::size_t>(request->candidate_ids_size()),
                 [&](const protocol::Caller& caller) {
                   return answer_for<v1::RerankResponse>(
                       request->artifact_version(),
                       [&](protocol::ProviderCore& c) { return c.rerank(*request, caller); });
                 });
  }

  // The log holds what the provider sees anyway: m and the sizes (never a cluster).
  grpc::Status PrivateScore(grpc::ServerContext* context, const v1::PrivateScoreRequest* request,
                            v1::PrivateScoreResponse* out) override {
    return serve("PrivateScore", Admission::kWorker, context, *request, out, request->queries(),
                 [&](const protocol::Caller& caller) {
                   return answer_for<v1::PrivateScoreResponse>(
                       request->artifact_version(), [&](protocol::ProviderCore& c) {
                         return c.private_score(*request, caller);
                       });
                 });
  }

  // Public list segments of the IVF index; the log holds the count and sizes (which lists a
  // client probed is not logged, though the provider could see it).
  grpc::Status FetchLists(grpc::ServerContext* context, const v1::FetchListsRequest* request,
                          v1::FetchListsResponse* out) override {
    return serve("FetchLists", Admission::kWorker, context, *request, out,
                 static_cast<std::size_t>(request->lists_size()), [&](const protocol::Caller&) {
                   return answer_for<v1::FetchListsResponse>(
                       request->artifact_version(),
                       [&](protocol::ProviderCore& c) { return c.fetch_lists(*request); });
                 });
  }

  // Registrations' owners also bound in the replicas' shared PIR state (ServeOptions).
  // Behind the HTTP/2 front (ServeOptions::behind_front): the caller's address is the one the
  // front sets in kFrontPeerHeader, believed only on the provider's unix socket (the front's
  // connections; nothing else can reach it).
  void trust_front_peer_header() { behind_front_ = true; }
  // What an in-process call carries in kInProcessTagHeader so its peer header is believed: a
  // random value made at start that never leaves the process. gRPC 1.51 names an in-process
  // call's peer "unknown", like other transports it cannot name, so the peer cannot tell.
  const std::string& in_process_tag() const { return in_process_tag_; }

  void share_pir_owners(std::shared_ptr<protocol::PirSharedState> shared) {
    owners_.share(std::move(shared));
  }
  unsigned in_flight() const { return in_flight_.load(); }
  CallHolds& holds() { return holds_; }

 private:
  // How much of the server a call may take before its answer is computed.
  enum class Admission {
    kAuthenticated,  // the caller's identity only (cheap reads: GetPirInfo, PirStatus)
    kLogged,         // ... and one request-log line (PirSetup)
    kWorker,         // the in-flight cap, the caller's share, a worker thread and a log line
  };
  // What an admitted call holds until gRPC has finished it (server/call_holds.h): released
  // after its answer is written, not when the handler returns.
  struct Admitted {
    std::optional<InFlight> in_flight;
    std::optional<PerClientSlots::Slot> share;
  };

  // The one admission path: authenticate, then for kWorker the in-flight cap (OVERLOADED),
  // cancellation, the caller's share of the workers (OVERLOADED when it holds all of it) and a
  // worker slot; the answer; one log line with `count`; typed refusals in the response, always
  // grpc::Status::OK (typed_parse.h relies on that).
  template <typename Request, typename Response, typename Answer>
  grpc::Status serve(const char* name, Admission admission, grpc::ServerContext* context,
                     const Request& request, Response* out, std::size_t count, Answer&& answer) {
    const auto t0 = std::chrono::steady_clock::now();
    auto admitted = std::make_shared<Admitted>();
    if (admission == Admission::kWorker) {
      if (admitted->in_flight.emplace(in_flight_).count > max_in_flight_) {
        *out->mutable_error() = protocol::make_error(v1::OVERLOADED, overloaded_message());
        return grpc::Status::OK;
      }
      if (context->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
    }
    protocol::Caller caller;
    if (auto e = authenticate(context, caller)) {
      *out->mutable_error() = *e;
    } else if (admission == Admission::kWorker &&
               !per_client_.take(caller.rate_key(), admitted->share)) {
      *out->mutable_error() = protocol::make_error(
          v1::OVERLOADED, "this client already has " + std::to_string(per_client_.limit()) +
                              " requests in flight (the per-client share); retry later");
    } else if (admission == Admission::kWorker) {
      const Workers::Slot worker(workers_);
      if (context->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
      *out = answer(caller);
    } else {
      *out = answer(caller);
    }
    if (admission != Admission::kAuthenticated) {
      log(name, out->has_error() ? out->error().code() : v1::ERROR_CODE_UNSPECIFIED, count,
          request.ByteSizeLong(), out->ByteSizeLong(), t0);
    }
    holds_.keep(context, std::move(admitted));
    return grpc::Status::OK;
  }

  template <typename Response>
  static Response refusal(v1::Error error) {
    Response out;
    *out.mutable_error() = std::move(error);
    return out;
  }

  // Who is calling; with tokens configured, an error when the bearer token is missing or
  // unknown. The token itself is never logged or kept.
  std::optional<v1::Error> authenticate(const grpc::ServerContext* context,
                                        protocol::Caller& caller) const {
    caller.peer = protocol::address_group(caller_address(context));
    if (tokens_ == nullptr) return std::nullopt;
    const auto& md = context->client_metadata();
    const auto it = md.find("authorization");
    constexpr std::string_view kBearer = "Bearer ";
    if (it != md.end()) {
      const std::string_view value(it->second.data(), it->second.size());
      if (value.substr(0, kBearer.size()) == kBearer) {
        if (auto id = tokens_->identity_for(value.substr(kBearer.size()))) {
          caller.identity = std::move(*id);
          return std::nullopt;
        }
        return protocol::make_error(v1::UNAUTHENTICATED, "unknown bearer token");
      }
    }
    return protocol::make_error(
        v1::UNAUTHENTICATED,
        "this provider requires a bearer token (authorization: Bearer <token>; privsearch "
        "--token-file)");
  }

  // Without the front: the connection's peer. Behind it: the front's header on the unix
  // socket; a request there without one (not from the front) shares the address "unix", so it
  // can only ever be limited more, never less.
  // The browser endpoint's in-process calls (server/web_gateway.h) carry the browser's address
  // in the same header; nothing outside this process can make such a call.
  std::string caller_address(const grpc::ServerContext* context) const {
    const std::string peer = context->peer();
    const auto& md = context->client_metadata();
    const auto tag = md.find(kInProcessTagHeader);
    const bool in_process =
        tag != md.end() && tag->second.size() == in_process_tag_.size() &&
        ct::memory_equal(tag->second.data(), in_process_tag_.data(), in_process_tag_.size());
    if (!in_process && (!behind_front_ || peer.rfind("unix:", 0) != 0)) return peer_address(peer);
    const auto it = md.find(kFrontPeerHeader);
    if (it == md.end() || it->second.empty() || it->second.size() > 64) return "unix";
    return std::string(it->second.data(), it->second.size());
  }

  // One JSON line per request: sizes, counts, outcome and time only (no secret material, no
  // candidate IDs).
  void log(const char* rpc, v1::ErrorCode code, std::size_t k, std::size_t bytes_in,
           std::size_t bytes_out, std::chrono::steady_clock::time_point t0) const {
    if (!log_) return;
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const auto wall = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
    log_(fmt::format(R"({{"ts_ms":{},"rpc":"{}","outcome":"{}","k":{},"bytes_in":{},)"
                     R"("bytes_out":{},"ms":{:.3f}}})",
                     wall, rpc,
                     code == v1::ERROR_CODE_UNSPECIFIED ? "OK" : v1::ErrorCode_Name(code), k,
                     bytes_in, bytes_out, ms));
  }
  protocol::PirBackend* backend(v1::PirDatabase database) const {
    switch (database) {
      case v1::PIR_DATABASE_PAYLOADS:
        return pir_;
      case v1::PIR_DATABASE_IVF_LISTS:
        return pir_lists_;
      default:
        return nullptr;
    }
  }
  static v1::Error unavailable(v1::PirDatabase database) {
    if (database == v1::PIR_DATABASE_IVF_LISTS) {
      return protocol::make_error(v1::PIR_UNAVAILABLE,
                                  "this provider serves no private IVF list fetch (an index "
                                  "without IVF lists, or started without --pir-lists)");
    }
    if (database != v1::PIR_DATABASE_PAYLOADS) {
      return protocol::make_error(v1::PIR_UNAVAILABLE,
                                  "unknown PIR database " + std::to_string(int{database}));
    }
    return protocol::make_error(v1::PIR_UNAVAILABLE,
                                "this provider serves no private payload fetch (no payload store "
                                "or started with --no-pir)");
  }
  // Another identity's registration answers as an unknown one (protocol/pir_owners.h).
  static v1::Error not_this_callers_client() {
    return protocol::make_error(v1::UNKNOWN_PIR_CLIENT, "unknown PIR client");
  }
  std::string overloaded_message() const {
    return "more than " + std::to_string(max_in_flight_) + " concurrent requests; retry later";
  }

  // The current core (what new clients get in ServerInfo and what key uploads go through:
  // key sets live in the shared ProviderState, so every retained core sees them).
  std::shared_ptr<protocol::ProviderCore> core() const {
    std::lock_guard lock(core_mu_);
    return cores_.front();
  }

  // The core serving `version`: a retained one, else ARTIFACT_STALE for a version served here
  // before, else the current core (which refuses the unknown version itself).
  template <typename Response, typename Call>
  Response answer_for(const std::string& version, Call&& call) const {
    std::shared_ptr<protocol::ProviderCore> chosen;
    std::string newest;
    bool retired = false;
    {
      std::lock_guard lock(core_mu_);
      newest = cores_.front()->config().artifact_version;
      for (const auto& c : cores_) {
        if (c->config().artifact_version == version) chosen = c;
      }
      retired =
          chosen == nullptr && std::find(served_.begin(), served_.end(), version) != served_.end();
      if (chosen == nullptr) chosen = cores_.front();
    }
    if (retired) {
      Response out;
      *out.mutable_error() =
          protocol::make_error(v1::ARTIFACT_STALE, "artifact version " + version.substr(0, 16) +
                                                       " is no longer served here; the newest is " +
                                                       newest + ": fetch it");
      return out;
    }
    return call(*chosen);
  }

  PerClientSlots per_client_;
  Workers workers_;
  protocol::PirOwners owners_;  // PIR registrations bound to the identity that made them
  static constexpr std::size_t kServedHistory = 256;  // version ids remembered as "retired"
  const unsigned keep_versions_;
  mutable std::mutex core_mu_;
  std::vector<std::shared_ptr<protocol::ProviderCore>> cores_;  // newest first, never empty
  std::vector<std::string> served_;  // every version served since start (oldest first, capped)
  protocol::PirBackend* pir_;
  protocol::PirBackend* pir_lists_;  // the IVF lists' database (--pir-lists), or null
  const unsigned max_in_flight_;
  std::function<void(const std::string&)> log_;
  const protocol::TokenRegistry* tokens_;
  bool behind_front_ = false;
  const TransportLimits transport_;
  const std::string instance_id_;
  // Marks this process's own in-process calls (in_process_tag()); never leaves the process.
  const std::string in_process_tag_;
  std::atomic<unsigned> in_flight_{0};
  CallHolds holds_;  // last member: its holds refer to per_client_ and in_flight_
};

}  // namespace privsearch::server::detail
