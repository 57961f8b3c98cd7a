#include "server/web_gateway.h"

#include <fmt/format.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <httplib.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "server/connection_deadlines.h"
#include "server/http2_front.h"
#include "server/web_request_policy.h"

namespace privsearch::server {

const std::vector<std::string>& web_rpc_methods() {
  static const std::vector<std::string> kMethods = {"GetServerInfo", "UploadKeys", "Rerank",
                                                    "PrivateScore",  "FetchLists", "GetPirInfo",
                                                    "PirSetup",      "PirStatus",  "PirQuery"};
  return kMethods;
}

namespace web_detail {

// Index-file transfers in flight, in total and per client: a reader that drains slowly holds a
// connection thread for up to its file's transfer deadline, so files may take only part of the
// threads (the calls always find one) and one client only a few of those.
class TransferSlots {
 public:
  TransferSlots(unsigned total, unsigned per_client)
      : total_(std::max(1u, total)), per_client_(std::max(1u, per_client)) {}
  bool take(const std::string& client) {
    std::lock_guard lock(mu_);
    auto& mine = by_client_[client];
    if (in_flight_ >= total_ || mine >= per_client_) {
      if (mine == 0) by_client_.erase(client);
      return false;
    }
    ++mine;
    ++in_flight_;
    return true;
  }
  void give_back(const std::string& client) {
    std::lock_guard lock(mu_);
    --in_flight_;
    if (--by_client_[client] == 0) by_client_.erase(client);
  }

 private:
  const unsigned total_, per_client_;
  std::mutex mu_;
  unsigned in_flight_ = 0;
  std::map<std::string, unsigned> by_client_;
};

}  // namespace web_detail

namespace {

bool is_manifest_file(const std::string& name) {
  return name == "manifest.json" || name == "manifest.sig";
}

// A fixed pool of connection threads over a bounded queue: when every thread is busy and the
// queue is full, the accept loop waits (the kernel's backlog, then the clients, wait) instead of
// opening more file descriptors or threads.
class BoundedPool final : public httplib::TaskQueue {
 public:
  BoundedPool(unsigned threads, unsigned queued) : capacity_(queued) {
    for (unsigned i = 0; i < std::max(1u, threads); ++i) workers_.emplace_back([this] { run(); });
  }
  void enqueue(std::function<void()> fn) override {
    std::unique_lock lock(mu_);
    space_.wait(lock, [&] { return jobs_.size() < capacity_ || stopping_; });
    if (stopping_) return;
    jobs_.push_back(std::move(fn));
    ready_.notify_one();
  }
  void shutdown() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    ready_.notify_all();
    space_.notify_all();
    for (auto& t : workers_) t.join();
  }

 private:
  void run() {
    // A connection shut down at its deadline fails the worker's next write with EPIPE: the
    // signal it raises stays pending on this thread instead of ending the process.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock lock(mu_);
        ready_.wait(lock, [&] { return !jobs_.empty() || stopping_; });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      space_.notify_one();
      job();
    }
  }
  const std::size_t capacity_;
  std::mutex mu_;
  std::condition_variable ready_, space_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> workers_;
  bool stopping_ = false;
};

WebRequestHead head_of(const httplib::Request& req) {
  WebRequestHead head{req.method, req.path, {}, req.remote_addr};
  head.headers.assign(req.headers.begin(), req.headers.end());
  return head;
}

// A transport refusal as HTTP: a body the service could not parse (typed_parse.h) is the
// caller's error, a message over the cap too large, a missed deadline a timeout.
std::pair<int, const char*> http_status_for(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::INVALID_ARGUMENT:
      return {400, "MALFORMED_REQUEST"};
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return {413, "MESSAGE_TOO_LARGE"};
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return {504, "DEADLINE_EXCEEDED"};
    case grpc::StatusCode::UNAVAILABLE:
      return {503, "UNAVAILABLE"};
    default:
      return {502, "INTERNAL"};
  }
}

void json_error(httplib::Response& res, int http_status, const std::string& code,
                const std::string& message) {
  res.status = http_status;
  res.set_content(nlohmann::json{{"code", code}, {"message", message}}.dump(), "application/json");
}

// A refused head: the connection closes after the answer, since an unread body would otherwise
// be parsed as the next request. Its byte ranges are dropped: the library applies a request's
// ranges to whatever answer it gets, an error included (500 ranges made 500 copies of it).
// The Request is the library's own non-const object, handed to the hooks as const.
void refuse_head(const httplib::Request& req, httplib::Response& res, const WebRefusal& refusal) {
  const_cast<httplib::Request&>(req).ranges.clear();
  json_error(res, refusal.http_status, refusal.code, refusal.message);
  res.set_header("Connection", "close");
}

// Loads the identity's PEM strings into the server's TLS context.
bool use_identity(SSL_CTX& ctx, const net::TlsIdentity& identity) {
  BIO* cert_bio = BIO_new_mem_buf(identity.certificate_pem().data(),
                                  static_cast<int>(identity.certificate_pem().size()));
  BIO* key_bio = BIO_new_mem_buf(identity.private_key_pem().data(),
                                 static_cast<int>(identity.private_key_pem().size()));
  X509* cert = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
  const bool ok = cert != nullptr && key != nullptr && SSL_CTX_use_certificate(&ctx, cert) == 1 &&
                  SSL_CTX_use_PrivateKey(&ctx, key) == 1 &&
                  SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION) == 1;
  X509_free(cert);
  EVP_PKEY_free(key);
  BIO_free(cert_bio);
  BIO_free(key_bio);
  return ok;
}

}  // namespace

struct WebGateway::Impl {
  WebOptions options;
  ProviderServer* server = nullptr;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<grpc::GenericStub> stub;
  // Declared before the server: it outlives every connection the server's threads serve.
  std::unique_ptr<ConnectionDeadlines> deadlines;
  std::unique_ptr<httplib::SSLServer> http;
  std::unique_ptr<web_detail::TransferSlots> transfers;
  std::thread listener;
  int port = 0;
  bool stopped = false;

  WebRequestPolicy policy() const {
    return {options.allowed_origins, options.trusted_proxies, options.max_body_bytes,
            !options.unix_socket.empty()};
  }
  void allow_origin(const httplib::Request& req, httplib::Response& res) const;
  void forward(const std::string& method, const AdmittedWebRequest& caller,
               const httplib::Request& req, httplib::Response& res) const;
  bool may_read_files(const AdmittedWebRequest& caller) const;
  void serve_index_file(const std::string& file, const AdmittedWebRequest& caller,
                        const httplib::Request& req, httplib::Response& res) const;
  void route();
  Status bind();
  void route_calls();
  void route_files();
};

void WebGateway::Impl::allow_origin(const httplib::Request& req, httplib::Response& res) const {
  const std::string origin = req.get_header_value("Origin");
  const auto& allowed = options.allowed_origins;
  if (origin.empty() || std::find(allowed.begin(), allowed.end(), origin) == allowed.end()) return;
  res.set_header("Access-Control-Allow-Origin", origin);
  res.set_header("Vary", "Origin");
  res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
  res.set_header("Access-Control-Allow-Methods", "GET, POST");
  res.set_header("Access-Control-Max-Age", "600");
}

// The request body to the in-process channel, unchanged; the answer's bytes back. The service
// answers refusals inside the message (always gRPC OK); a gRPC error here is the transport's
// own (message too large, deadline): a JSON error with its name.
// Only values the head check admitted reach the metadata (gRPC aborts the process on a value
// outside 0x20-0x7E); checked again here, where they are copied.
void WebGateway::Impl::forward(const std::string& method, const AdmittedWebRequest& caller,
                               const httplib::Request& req, httplib::Response& res) const {
  if (!is_safe_metadata_value(caller.client_address, 64) ||
      !is_safe_metadata_value(caller.authorization, 1024)) {
    json_error(res, 400, "MALFORMED_HEADER", "a header gRPC cannot carry");
    return;
  }
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(options.rpc_deadline_s));
  server->mark_in_process(ctx);
  ctx.AddMetadata(kFrontPeerHeader, caller.client_address);
  if (!caller.authorization.empty()) ctx.AddMetadata("authorization", caller.authorization);
  grpc::Slice slice(req.body);
  grpc::ByteBuffer request(&slice, 1), response;
  grpc::CompletionQueue cq;
  auto call = stub->PrepareUnaryCall(&ctx, "/privsearch.v1.Provider/" + method, request, &cq);
  call->StartCall();
  grpc::Status status;
  call->Finish(&response, &status, reinterpret_cast<void*>(1));
  void* tag = nullptr;
  bool ok = false;
  cq.Next(&tag, &ok);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  if (!status.ok()) {
    const auto [http_status, name] = http_status_for(status.error_code());
    json_error(res, http_status, name, "the provider refused the call: " + status.error_message());
    return;
  }
  std::vector<grpc::Slice> slices;
  (void)response.Dump(&slices);
  std::string body;
  for (const auto& s : slices) body.append(reinterpret_cast<const char*>(s.begin()), s.size());
  res.set_content(body, "application/x-protobuf");
}

// With tokens, a file read needs a known bearer token, as a call does.
bool WebGateway::Impl::may_read_files(const AdmittedWebRequest& caller) const {
  if (options.tokens == nullptr) return true;
  constexpr std::string_view kBearer = "Bearer ";
  const std::string_view auth = caller.authorization;
  return auth.substr(0, kBearer.size()) == kBearer &&
         options.tokens->identity_for(auth.substr(kBearer.size())).has_value();
}

// A public file of the served index (WebOptions::public_file decides which); anything else is
// 404, whatever the directory holds. Streamed from the open file in 64 KiB pieces, under a
// transfer slot held until the answer is written or abandoned.
void WebGateway::Impl::serve_index_file(const std::string& file, const AdmittedWebRequest& caller,
                                        const httplib::Request& req, httplib::Response& res) const {
  if (!may_read_files(caller)) {
    json_error(res, 401, "UNAUTHENTICATED", "this provider requires a bearer token");
    return;
  }
  const auto path = options.public_file ? options.public_file(file)
                                        : Result<std::filesystem::path>(not_found_error(file));
  auto in = std::make_shared<std::ifstream>();
  if (path.ok()) in->open(path.value(), std::ios::binary | std::ios::ate);
  if (!path.ok() || !*in) {
    json_error(res, 404, "NOT_FOUND", "no public index file of that name");
    return;
  }
  const auto size = static_cast<std::uint64_t>(in->tellg());
  // The library answers a range past the file with a 206 claiming the range's length: one
  // range (the head check allows no more) must lie inside the file.
  for (const auto& [first, last] : req.ranges) {
    const bool suffix = first < 0;  // bytes=-N: the last N bytes
    if ((suffix && (last <= 0 || static_cast<std::uint64_t>(last) > size)) ||
        (!suffix && (static_cast<std::uint64_t>(first) >= size ||
                     (last >= 0 && (last < first || static_cast<std::uint64_t>(last) >= size))))) {
      refuse_head(req, res, {416, "RANGE_NOT_SATISFIABLE", "the range is not inside the file"});
      res.set_header("Content-Range", "bytes */" + std::to_string(size));
      return;
    }
  }
  if (!transfers->take(caller.client_address)) {
    res.set_header("Retry-After", "1");
    json_error(res, 503, "OVERLOADED", "too many index files in transfer; retry shortly");
    return;
  }
  // A large file may take longer than one transfer phase, but not longer than its size at the
  // slowest rate we serve (a reader slower than that holds a thread for nothing).
  deadlines->arm_current(
      std::chrono::seconds(options.transfer_deadline_s) +
      std::chrono::seconds(size / std::max<std::uint64_t>(1, options.min_transfer_bytes_per_s)));
  // The page names each artifact by its manifest hash (?sha256=...), so a cached copy is valid
  // for as long as that URL exists; the manifest itself is always revalidated.
  res.set_header("Cache-Control", is_manifest_file(file) ? "no-cache" : "max-age=86400");
  res.set_content_provider(
      size, "application/octet-stream",
      [in](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
        char buf[1 << 16];
        in->seekg(static_cast<std::streamoff>(offset));
        const auto n = std::min<std::size_t>(length, sizeof buf);
        if (!in->read(buf, static_cast<std::streamsize>(n))) return false;
        return sink.write(buf, n);
      },
      [slots = transfers.get(), client = caller.client_address](bool) {
        slots->give_back(client);
      });
}

void WebGateway::Impl::route() {
  auto& s = *http;
  s.set_payload_max_length(options.max_body_bytes);
  s.set_read_timeout(options.read_timeout_s, 0);
  s.set_write_timeout(options.write_timeout_s, 0);
  s.set_keep_alive_timeout(options.keep_alive_s);
  s.set_keep_alive_max_count(100);
  s.set_tcp_nodelay(true);  // a response's header and body writes must not wait for an ACK
  s.new_task_queue = [o = options] { return new BoundedPool(o.threads, o.queued); };
  // The phases of a connection (connection_deadlines.h): the head is in once routing starts, the
  // answer is written once the logger runs; the keep-alive wait and the next head come after.
  // The head is checked here, before the library reads a body (web_request_policy.h).
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    deadlines->arm_current(std::chrono::seconds(options.transfer_deadline_s));
    allow_origin(req, res);
    res.set_header("X-Content-Type-Options", "nosniff");
    if (const auto admitted = admit_web_request(head_of(req), policy());
        std::holds_alternative<WebRefusal>(admitted)) {
      refuse_head(req, res, std::get<WebRefusal>(admitted));
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.method == "OPTIONS") {  // a CORS preflight: the headers above, no body
      res.status = res.has_header("Access-Control-Allow-Origin") ? 204 : 403;
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  route_calls();
  route_files();
  s.set_logger([this](const httplib::Request&, const httplib::Response&) {
    deadlines->arm_current(std::chrono::seconds(options.keep_alive_s + options.head_deadline_s));
  });
  if (!options.web_root.empty()) {
    s.set_mount_point("/", options.web_root.string());
    s.set_file_extension_and_mimetype_mapping("wasm", "application/wasm");
    s.set_file_extension_and_mimetype_mapping("mjs", "text/javascript");
    s.set_file_extension_and_mimetype_mapping("proto", "text/plain");
  }
}

// The handlers run only for heads the pre-routing check admitted; they ask it again for the
// caller (a pure function of the head) rather than pass state between the two.
void WebGateway::Impl::route_calls() {
  http->Post(R"(/privsearch\.v1\.Provider/([A-Za-z]+))",
             [this](const httplib::Request& req, httplib::Response& res) {
               const auto admitted = admit_web_request(head_of(req), policy());
               const auto* caller = std::get_if<AdmittedWebRequest>(&admitted);
               if (caller == nullptr) {
                 refuse_head(req, res, std::get<WebRefusal>(admitted));
                 return;
               }
               const std::string method = req.matches[1];
               const auto& known = web_rpc_methods();
               if (std::find(known.begin(), known.end(), method) == known.end()) {
                 json_error(res, 404, "UNKNOWN_METHOD", "no Provider method " + method);
                 return;
               }
               deadlines->arm_current(
                   std::chrono::seconds(options.rpc_deadline_s + options.transfer_deadline_s));
               // A call is never answered in ranges (the head check refuses them; the library
               // would otherwise apply any it parsed to the answer).
               const_cast<httplib::Request&>(req).ranges.clear();
               forward(method, *caller, req, res);
             });
}

void WebGateway::Impl::route_files() {
  http->Get(R"(/index/([A-Za-z0-9_.\-]+))",
            [this](const httplib::Request& req, httplib::Response& res) {
              const auto admitted = admit_web_request(head_of(req), policy());
              if (const auto* caller = std::get_if<AdmittedWebRequest>(&admitted)) {
                serve_index_file(req.matches[1], *caller, req, res);
              } else {
                refuse_head(req, res, std::get<WebRefusal>(admitted));
              }
            });
}

// The public host:port, or (behind the front) the unix socket, whose stale file of an earlier
// run is replaced.
Status WebGateway::Impl::bind() {
  if (!options.unix_socket.empty()) {
    std::error_code ec;
    std::filesystem::remove(options.unix_socket, ec);
    http->set_address_family(AF_UNIX);
    // httplib binds the path; the port is unused but must be non-zero (it reports success as
    // the port it "bound", so 0 reads as a failure).
    if (!http->bind_to_port(options.unix_socket.string(), 1)) {
      return Status(StatusCode::kUnavailable,
                    "the browser endpoint cannot listen on " + options.unix_socket.string());
    }
    return Status();
  }
  const auto colon = options.listen.rfind(':');
  if (colon == std::string::npos) {
    return invalid_argument_error("--web-listen wants host:port, not " + options.listen);
  }
  std::string host = options.listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  int wanted = 0;
  try {
    wanted = std::stoi(options.listen.substr(colon + 1));
  } catch (...) {
    return invalid_argument_error("--web-listen: bad port in " + options.listen);
  }
  port =
      wanted == 0 ? http->bind_to_any_port(host) : (http->bind_to_port(host, wanted) ? wanted : -1);
  if (port <= 0) {
    return Status(StatusCode::kUnavailable,
                  "the browser endpoint cannot listen on " + options.listen);
  }
  return Status();
}

WebGateway::WebGateway(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WebGateway::~WebGateway() { stop(); }
int WebGateway::port() const { return impl_->port; }
std::uint64_t WebGateway::connections_cut() const { return impl_->deadlines->cut(); }

void WebGateway::stop() {
  if (!impl_ || impl_->stopped) return;
  impl_->stopped = true;
  impl_->http->stop();
  if (impl_->listener.joinable()) impl_->listener.join();
}

Result<std::unique_ptr<WebGateway>> WebGateway::start(ProviderServer& server,
                                                      const WebOptions& options) {
  if (options.identity == nullptr) {
    return invalid_argument_error("the browser endpoint needs the provider's TLS identity");
  }
  if (options.head_deadline_s < 1 || options.transfer_deadline_s < 1 ||
      options.connection_lifetime_s < 1) {
    return invalid_argument_error(
        "the browser endpoint's head, transfer and lifetime deadlines must be at least 1 s");
  }
  if (std::string bad; !valid_address_entries(options.trusted_proxies, &bad)) {
    return invalid_argument_error("--web-trust-proxy-from: not an address or CIDR: " + bad);
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->server = &server;
  impl->channel = server.in_process_channel();
  impl->stub = std::make_unique<grpc::GenericStub>(impl->channel);
  impl->transfers = std::make_unique<web_detail::TransferSlots>(std::max(1u, options.threads / 2),
                                                                options.file_transfers_per_client);
  impl->deadlines =
      std::make_unique<ConnectionDeadlines>(std::chrono::seconds(options.head_deadline_s),
                                            std::chrono::seconds(options.connection_lifetime_s));
  // The callback runs inside the constructor: the identity is only read there.
  const net::TlsIdentity* identity = options.identity;
  impl->http =
      std::make_unique<httplib::SSLServer>([identity, d = impl->deadlines.get()](SSL_CTX& ctx) {
        return use_identity(ctx, *identity) && d->install(ctx);
      });
  if (!impl->http->is_valid()) return internal_error("the browser endpoint's TLS setup failed");
  impl->route();
  PRIVSEARCH_RETURN_IF_ERROR(impl->bind());
  impl->listener = std::thread([s = impl->http.get()] { s->listen_after_bind(); });
  return std::unique_ptr<WebGateway>(new WebGateway(std::move(impl)));
}

}  // namespace privsearch::server
