#include "harness/stalled_streams.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

namespace privsearch::tools {
namespace {

// HTTP/2 frame types and flags (RFC 9113 section 6).
enum : std::uint8_t {
  kData = 0x0,
  kHeaders = 0x1,
  kRstStream = 0x3,
  kSettings = 0x4,
  kPing = 0x6,
  kGoaway = 0x7,
  kWindowUpdate = 0x8,
};
constexpr std::uint8_t kAck = 0x1, kEndHeaders = 0x4;
constexpr std::int64_t kDefaultWindow = 65535;

void put_frame_header(std::string& out, std::size_t length, std::uint8_t type, std::uint8_t flags,
                      std::uint32_t stream) {
  out.push_back(static_cast<char>(length >> 16));
  out.push_back(static_cast<char>(length >> 8));
  out.push_back(static_cast<char>(length));
  out.push_back(static_cast<char>(type));
  out.push_back(static_cast<char>(flags));
  out.push_back(static_cast<char>((stream >> 24) & 0x7f));
  out.push_back(static_cast<char>(stream >> 16));
  out.push_back(static_cast<char>(stream >> 8));
  out.push_back(static_cast<char>(stream));
}

// HPACK integer with an n-bit prefix (RFC 7541 section 5.1); `first` holds the pattern bits.
void put_hpack_int(std::string& out, std::size_t value, int prefix_bits, std::uint8_t first) {
  const std::size_t max = (std::size_t{1} << prefix_bits) - 1;
  if (value < max) {
    out.push_back(static_cast<char>(first | value));
    return;
  }
  out.push_back(static_cast<char>(first | max));
  value -= max;
  while (value >= 128) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

// A literal header field without indexing, new name, no Huffman coding.
void put_literal(std::string& out, const std::string& name, const std::string& value) {
  out.push_back(0x00);
  put_hpack_int(out, name.size(), 7, 0);
  out += name;
  put_hpack_int(out, value.size(), 7, 0);
  out += value;
}

bool write_all(SSL* ssl, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const int n = SSL_write(ssl, bytes.data() + done, static_cast<int>(bytes.size() - done));
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

Result<std::unique_ptr<StalledStreams>> StalledStreams::start(const StalledStreamsSpec& spec) {
  std::unique_ptr<StalledStreams> s(new StalledStreams());
  s->spec_ = spec;
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) return Status(StatusCode::kInternal, "SSL_CTX_new failed");
  s->ctx_ = ctx;
  SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);  // the attacker does not care who it is
  static const unsigned char kAlpn[] = {2, 'h', '2'};
  SSL_CTX_set_alpn_protos(ctx, kAlpn, sizeof(kAlpn));
  for (std::size_t c = 0; c < spec.connections; ++c) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) break;
    sockaddr_in from{};
    from.sin_family = AF_INET;
    ::inet_pton(AF_INET, spec.source.c_str(), &from.sin_addr);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0) {
      ::close(fd);
      continue;
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(spec.port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      ::close(fd);
      continue;
    }
    timeval tv{0, 100000};  // reads wake every 100 ms to notice stop_
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    SSL* ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    if (SSL_connect(ssl) != 1) {  // refused or timed out (the read timeout applies)
      SSL_free(ssl);
      ::close(fd);
      ERR_clear_error();
      continue;
    }
    s->ssl_.push_back(ssl);
    s->threads_.emplace_back([p = s.get(), fd, ssl] { p->run(fd, ssl); });
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
  for (void* ssl : ssl_) {
    const int fd = SSL_get_fd(static_cast<SSL*>(ssl));
    SSL_free(static_cast<SSL*>(ssl));
    ::close(fd);
  }
  SSL_CTX_free(static_cast<SSL_CTX*>(ctx_));
}

void StalledStreams::run(int /*fd*/, void* ssl_ptr) {
  // The provider closes these connections while we write: EPIPE, not a SIGPIPE that would kill
  // the test (blocked in this thread only; a pending one is discarded with the thread).
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  SSL* ssl = static_cast<SSL*>(ssl_ptr);
  std::string out = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  put_frame_header(out, 0, kSettings, 0, 0);
  // Streams 1, 3, 5, ...: headers now, bodies as the windows allow.
  std::map<std::uint32_t, std::int64_t> stream_window;  // stream -> window
  std::map<std::uint32_t, std::size_t> body_left;       // stream -> bytes still to send
  for (std::size_t i = 0; i < spec_.streams_per_connection; ++i) {
    const auto id = static_cast<std::uint32_t>(2 * i + 1);
    std::string block;
    put_literal(block, ":method", "POST");
    put_literal(block, ":scheme", "https");
    put_literal(block, ":path", spec_.rpc_path);
    put_literal(block, ":authority", "localhost");
    put_literal(block, "content-type", "application/grpc");
    put_literal(block, "te", "trailers");
    put_frame_header(out, block.size(), kHeaders, kEndHeaders, id);
    out += block;
    stream_window[id] = kDefaultWindow;
    body_left[id] = 5 + spec_.announced_bytes - 1;  // the prefix, then all but one byte
  }
  if (!write_all(ssl, out)) {
    ++closed_;
    return;
  }
  std::int64_t connection_window = kDefaultWindow;
  std::string pending;  // bytes read but not yet parsed
  char buf[16384];
  while (!stop_) {
    // Send whatever the windows allow, in frames of at most 16 KB (the default max frame).
    std::string data;
    for (auto& [id, left] : body_left) {
      while (left > 0 && connection_window > 0 && stream_window[id] > 0) {
        const std::size_t n = std::min<std::size_t>(
            {left, 16384, static_cast<std::size_t>(connection_window),
             static_cast<std::size_t>(stream_window[id])});
        put_frame_header(data, n, kData, 0, id);
        const std::size_t total = 5 + spec_.announced_bytes - 1;
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
        connection_window -= static_cast<std::int64_t>(n);
        stream_window[id] -= static_cast<std::int64_t>(n);
        sent_ += n;
      }
    }
    if (!data.empty() && !write_all(ssl, data)) break;
    const int n = SSL_read(ssl, buf, sizeof(buf));
    if (n <= 0) {
      const int err = SSL_get_error(ssl, n);
      if (err == SSL_ERROR_WANT_READ || (err == SSL_ERROR_SYSCALL && errno == EAGAIN)) {
        ERR_clear_error();
        continue;  // the read timeout: loop to check stop_
      }
      break;  // closed by the provider
    }
    pending.append(buf, static_cast<std::size_t>(n));
    std::string reply;
    while (pending.size() >= 9) {
      const auto* h = reinterpret_cast<const unsigned char*>(pending.data());
      const std::size_t len = (std::size_t{h[0]} << 16) | (std::size_t{h[1]} << 8) | h[2];
      if (pending.size() < 9 + len) break;
      const std::uint8_t type = h[3], flags = h[4];
      const std::uint32_t stream =
          ((std::uint32_t{h[5]} & 0x7f) << 24) | (std::uint32_t{h[6]} << 16) |
          (std::uint32_t{h[7]} << 8) | h[8];
      const auto* payload = h + 9;
      if (type == kSettings && (flags & kAck) == 0) {
        // SETTINGS_INITIAL_WINDOW_SIZE (0x4) changes every stream's window by the difference.
        for (std::size_t i = 0; i + 6 <= len; i += 6) {
          const unsigned id = (unsigned{payload[i]} << 8) | payload[i + 1];
          const std::int64_t value = (std::int64_t{payload[i + 2]} << 24) |
                                     (std::int64_t{payload[i + 3]} << 16) |
                                     (std::int64_t{payload[i + 4]} << 8) | payload[i + 5];
          if (id == 0x4) {
            for (auto& [sid, w] : stream_window) w += value - kDefaultWindow;
          }
        }
        put_frame_header(reply, 0, kSettings, kAck, 0);
      } else if (type == kPing && (flags & kAck) == 0 && len == 8) {
        put_frame_header(reply, 8, kPing, kAck, 0);
        reply.append(reinterpret_cast<const char*>(payload), 8);
      } else if (type == kWindowUpdate && len == 4) {
        const std::int64_t inc = ((std::int64_t{payload[0]} & 0x7f) << 24) |
                                 (std::int64_t{payload[1]} << 16) |
                                 (std::int64_t{payload[2]} << 8) | payload[3];
        if (stream == 0) {
          connection_window += inc;
        } else if (stream_window.count(stream) != 0) {
          stream_window[stream] += inc;
        }
      } else if (type == kRstStream) {
        ++resets_;
        body_left.erase(stream);
      }  // GOAWAY: the provider closes the connection next (counted below)
      pending.erase(0, 9 + len);
    }
    if (!reply.empty() && !write_all(ssl, reply)) break;
  }
  if (!stop_) ++closed_;  // the provider ended the connection
}

}  // namespace privsearch::tools
