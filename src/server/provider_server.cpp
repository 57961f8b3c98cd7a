#include "server/provider_server.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/security/server_credentials.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "core/bytes.h"
#include "core/csprng.h"
#include "protocol/pir_owners.h"
#include "protocol/privsearch.grpc.pb.h"
#include "server/call_holds.h"
#include "server/http2_front.h"
#include "server/typed_parse.h"

namespace privsearch::server {
namespace {

bool is_loopback(const std::string& listen) {
  return listen.rfind("127.0.0.1:", 0) == 0 || listen.rfind("[::1]:", 0) == 0 ||
         listen.rfind("localhost:", 0) == 0;
}

// The peer's address without the port: "ipv4:127.0.0.1:5000" -> "127.0.0.1",
// "ipv6:[::1]:5000" -> "::1" (rate limits are per address, not per connection).
std::string peer_address(const std::string& peer) {
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

// Requests in flight per client (its identity, else its peer address): one client may hold at
// most `limit` of the workers, so its flood queues behind itself instead of in front of everyone
// (a K = 1024 rerank holds a worker ~10x longer than a K = 100 one). 0: no limit.
class PerClientSlots {
 public:
  explicit PerClientSlots(unsigned limit) : limit_(limit) {}
  class Slot {
   public:
    Slot(PerClientSlots* owner, std::string client) : owner_(owner), client_(std::move(client)) {}
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    Slot& operator=(Slot&&) = delete;
    ~Slot() {
      if (owner_ != nullptr) owner_->release(client_);
    }

   private:
    PerClientSlots* owner_;
    std::string client_;
  };
  // Fills `slot` with one of `client`'s slots; false when it holds all of its share.
  bool take(const std::string& client, std::optional<Slot>& slot) {
    if (limit_ == 0) {
      slot.emplace(nullptr, client);
      return true;
    }
    std::lock_guard lock(mu_);
    unsigned& n = in_flight_[client];
    if (n >= limit_) return false;
    ++n;
    slot.emplace(this, client);
    return true;
  }
  unsigned limit() const { return limit_; }

 private:
  void release(const std::string& client) {
    std::lock_guard lock(mu_);
    const auto it = in_flight_.find(client);
    if (it != in_flight_.end() && --it->second == 0) in_flight_.erase(it);
  }
  const unsigned limit_;
  std::mutex mu_;
  std::map<std::string, unsigned> in_flight_;
};

// The worker threads' share of the CPU: at most `threads` requests compute at once (kernel
// evaluation, key decoding, PIR answers); the others wait here, up to the in-flight limit, then
// OVERLOADED. Without it the sync server runs every admitted request on its own thread, so
// --threads would not bound the cores a provider takes (a replica meant to use one core used
// both) and concurrent kernels would only lengthen each other's latency.
class Workers {
 public:
  explicit Workers(unsigned threads) : free_(std::max(1u, threads)) {}
  class Slot {
   public:
    explicit Slot(Workers& w) : w_(w) { w_.acquire(); }
    ~Slot() { w_.release(); }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;

   private:
    Workers& w_;
  };

 private:
  void acquire() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return free_ > 0; });
    --free_;
  }
  void release() {
    {
      std::lock_guard lock(mu_);
      ++free_;
    }
    cv_.notify_one();
  }
  std::mutex mu_;
  std::condition_variable cv_;
  unsigned free_;
};

// A call's place among the requests in flight: `count` includes it.
struct InFlight {
  explicit InFlight(std::atomic<unsigned>& c) : counter(c), count(++c) {}
  ~InFlight() { --counter; }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;
  std::atomic<unsigned>& counter;
  unsigned count;
};

class Service final : public v1::Provider::Service {
 public:
  Service(std::shared_ptr<protocol::ProviderCore> core, protocol::PirBackend* pir,
          protocol::PirBackend* pir_lists, unsigned max_in_flight, std::function<void(const std::string&)> log,
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
        instance_id_(to_byte_string(Prng::random_seed())) {
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
    return serve("PirStatus", Admission::kAuthenticated, context, *request, out, 0,
                 [&](const protocol::Caller& caller) {
                   protocol::PirBackend* pir = backend(request->database());
                   if (pir == nullptr) {
                     return refusal<v1::PirStatusResponse>(unavailable(request->database()));
                   }
                   if (!owners_.allowed(request->database(), request->client_id(),
                                        caller.identity)) {
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
    l->set_connection_max_age_s(static_cast<std::uint32_t>(transport_.max_connection_age_ms / 1000));
    l->set_message_receive_deadline_s(static_cast<std::uint32_t>(
        (transport_.max_connection_age_ms + transport_.max_connection_age_grace_ms) / 1000));
    out->set_instance_id(instance_id_);
    out->set_auth_required(tokens_ != nullptr);
    return grpc::Status::OK;
  }

  grpc::Status UploadKeys(grpc::ServerContext* context, const v1::UploadKeysRequest* request,
                          v1::UploadKeysResponse* out) override {
    return serve("UploadKeys", Admission::kWorker, context, *request, out, 0,
                 [&](const protocol::Caller& caller) {
                   return core()->upload_keys(*request, caller);
                 });
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
  std::string caller_address(const grpc::ServerContext* context) const {
    const std::string peer = context->peer();
    if (!behind_front_ || peer.rfind("unix:", 0) != 0) return peer_address(peer);
    const auto& md = context->client_metadata();
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
      case v1::PIR_DATABASE_PAYLOADS: return pir_;
      case v1::PIR_DATABASE_IVF_LISTS: return pir_lists_;
      default: return nullptr;
    }
  }
  static v1::Error unavailable(v1::PirDatabase database) {
    if (database == v1::PIR_DATABASE_IVF_LISTS) {
      return protocol::make_error(v1::PIR_UNAVAILABLE,
                                  "this provider serves no private IVF list fetch (an index "
                                  "without IVF lists, or started without --pir-lists)");
    }
    if (database != v1::PIR_DATABASE_PAYLOADS) {
      return protocol::make_error(v1::PIR_UNAVAILABLE, "unknown PIR database " +
                                                           std::to_string(int{database}));
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
      retired = chosen == nullptr &&
                std::find(served_.begin(), served_.end(), version) != served_.end();
      if (chosen == nullptr) chosen = cores_.front();
    }
    if (retired) {
      Response out;
      *out.mutable_error() = protocol::make_error(
          v1::ARTIFACT_STALE, "artifact version " + version.substr(0, 16) +
                                  " is no longer served here; the newest is " + newest +
                                  ": fetch it");
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
  std::atomic<unsigned> in_flight_{0};
  CallHolds holds_;  // last member: its holds refer to per_client_ and in_flight_
};

}  // namespace

struct ProviderServer::Impl {
  std::unique_ptr<Service> service;
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
      return Status(StatusCode::kInvalidArgument,
                    "plaintext transport is only allowed on a loopback address, not " +
                        options.listen);
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
  impl->service = std::make_unique<Service>(
      core_ptr, options.pir, options.pir_lists, max_in_flight, options.request_log, options.tokens, options.transport,
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
  const auto cap = static_cast<int>(std::min<std::uint64_t>(limits.max_message_bytes + 4096,
                                                            std::uint64_t{1} << 30));
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
