#include "harness/stalled_streams.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <map>

#include "harness/h2_wire.h"

namespace privsearch::tools {

struct StalledStreams::Connection {
  h2::TlsConnection tls;
  std::int64_t connection_window = h2::kDefaultWindow;
  std::map<std::uint32_t, std::int64_t> stream_window;  // stream -> window
  std::map<std::uint32_t, std::size_t> body_left;       // stream -> bytes still to send
  std::string pending;                                  // read, not yet parsed
};

Result<std::unique_ptr<StalledStreams>> StalledStreams::start(const StalledStreamsSpec& spec) {
  std::unique_ptr<StalledStreams> s(new StalledStreams());
  s->spec_ = spec;
  SSL_CTX* ctx = h2::attacker_tls_context();
  if (ctx == nullptr) return Status(StatusCode::kInternal, "SSL_CTX_new failed");
  s->ctx_ = ctx;
  for (std::size_t c = 0; c < spec.connections; ++c) {
    auto conn = std::make_unique<Connection>();
    conn->tls = h2::TlsConnection::open(ctx, spec.source, spec.port);
    if (!conn->tls.ok()) continue;
    s->connections_.push_back(std::move(conn));
  }
  for (std::size_t i = 0; i < s->connections_.size(); ++i) {
    s->threads_.emplace_back([p = s.get(), i] { p->run(i); });
  }
  if (s->threads_.empty()) {
    return Status(StatusCode::kUnavailable,
                  "no HTTP/2 connection to 127.0.0.1:" + std::to_string(spec.port));
  }
  return s;
}

StalledStreams::~StalledStreams() {
  stop_ = true;
  for (auto& t : threads_) t.join();
  connections_.clear();
  SSL_CTX_free(static_cast<SSL_CTX*>(ctx_));
}

bool StalledStreams::send_bodies(Connection& c) {
  // Whatever the windows allow, in frames of at most 16 KB (the default max frame).
  std::string data;
  const std::size_t total = 5 + spec_.announced_bytes - 1;
  for (auto& [id, left] : c.body_left) {
    while (left > 0 && c.connection_window > 0 && c.stream_window[id] > 0) {
      const std::size_t n =
          std::min<std::size_t>({left, 16384, static_cast<std::size_t>(c.connection_window),
                                 static_cast<std::size_t>(c.stream_window[id])});
      h2::put_frame_header(data, n, h2::kData, 0, id);
      std::size_t offset = total - left;
      for (std::size_t k = 0; k < n; ++k, ++offset) {
        // The gRPC prefix: uncompressed, 4-byte big-endian length; then filler bytes.
        char b = 'x';
        if (offset == 0) b = 0;
        if (offset >= 1 && offset <= 4) {
          b = static_cast<char>(spec_.announced_bytes >> (8 * (4 - offset)));
        }
        data.push_back(b);
      }
      left -= n;
      c.connection_window -= static_cast<std::int64_t>(n);
      c.stream_window[id] -= static_cast<std::int64_t>(n);
      sent_ += n;
    }
  }
  return data.empty() || c.tls.write_all(data);
}

bool StalledStreams::handle_frames(Connection& c) {
  std::string reply;
  h2::Frame f;
  while (h2::take_frame(c.pending, f)) {
    const auto* p = reinterpret_cast<const unsigned char*>(f.payload.data());
    const std::size_t len = f.payload.size();
    if (f.type == h2::kSettings && (f.flags & h2::kAck) == 0) {
      // SETTINGS_INITIAL_WINDOW_SIZE (0x4) changes every stream's window by the difference.
      for (std::size_t i = 0; i + 6 <= len; i += 6) {
        const unsigned id = (unsigned{p[i]} << 8) | p[i + 1];
        const std::int64_t value = (std::int64_t{p[i + 2]} << 24) | (std::int64_t{p[i + 3]} << 16) |
                                   (std::int64_t{p[i + 4]} << 8) | p[i + 5];
        if (id == 0x4) {
          for (auto& [sid, w] : c.stream_window) w += value - h2::kDefaultWindow;
        }
      }
      h2::put_frame_header(reply, 0, h2::kSettings, h2::kAck, 0);
    } else if (f.type == h2::kPing && (f.flags & h2::kAck) == 0 && len == 8) {
      h2::put_frame_header(reply, 8, h2::kPing, h2::kAck, 0);
      reply += f.payload;
    } else if (f.type == h2::kWindowUpdate && len == 4) {
      const std::int64_t inc = ((std::int64_t{p[0]} & 0x7f) << 24) | (std::int64_t{p[1]} << 16) |
                               (std::int64_t{p[2]} << 8) | p[3];
      if (f.stream == 0) {
        c.connection_window += inc;
      } else if (c.stream_window.count(f.stream) != 0) {
        c.stream_window[f.stream] += inc;
      }
    } else if (f.type == h2::kRstStream) {
      ++resets_;
      c.body_left.erase(f.stream);
    }  // GOAWAY: the provider closes the connection next (counted by run)
  }
  return reply.empty() || c.tls.write_all(reply);
}

void StalledStreams::run(std::size_t index) {
  h2::ignore_sigpipe_in_this_thread();
  Connection& c = *connections_[index];
  std::string out = h2::kPreface;
  h2::put_frame_header(out, 0, h2::kSettings, 0, 0);
  // Streams 1, 3, 5, ...: headers now, bodies as the windows allow.
  for (std::size_t i = 0; i < spec_.streams_per_connection; ++i) {
    const auto id = static_cast<std::uint32_t>(2 * i + 1);
    const std::string block = h2::grpc_request_headers(spec_.rpc_path);
    h2::put_frame_header(out, block.size(), h2::kHeaders, h2::kEndHeaders, id);
    out += block;
    c.stream_window[id] = h2::kDefaultWindow;
    c.body_left[id] = 5 + spec_.announced_bytes - 1;  // the prefix, then all but one byte
  }
  if (!c.tls.write_all(out)) {
    ++closed_;
    return;
  }
  while (!stop_) {
    if (!send_bodies(c)) break;
    const int n = c.tls.read_some(c.pending);
    if (n < 0) break;  // closed by the provider
    if (n > 0 && !handle_frames(c)) break;
  }
  if (!stop_) ++closed_;  // the provider ended the connection
}

}  // namespace privsearch::tools
