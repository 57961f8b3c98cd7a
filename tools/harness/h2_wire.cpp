#include "harness/h2_wire.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace privsearch::tools::h2 {

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

void put_literal(std::string& out, const std::string& name, const std::string& value) {
  out.push_back(0x00);
  put_hpack_int(out, name.size(), 7, 0);
  out += name;
  put_hpack_int(out, value.size(), 7, 0);
  out += value;
}

std::string grpc_message(const std::string& serialized) {
  std::string message(5, '\0');
  for (int i = 0; i < 4; ++i) {
    message[1 + i] = static_cast<char>(serialized.size() >> (24 - 8 * i));
  }
  return message + serialized;
}

std::string grpc_request_headers(const std::string& path) {
  std::string block;
  put_literal(block, ":method", "POST");
  put_literal(block, ":scheme", "https");
  put_literal(block, ":path", path);
  put_literal(block, ":authority", "localhost");
  put_literal(block, "content-type", "application/grpc");
  put_literal(block, "te", "trailers");
  return block;
}

std::string settings_frame(std::initializer_list<std::pair<std::uint16_t, std::uint32_t>> values) {
  std::string out;
  put_frame_header(out, 6 * values.size(), kSettings, 0, 0);
  for (const auto& [id, value] : values) {
    out.push_back(static_cast<char>(id >> 8));
    out.push_back(static_cast<char>(id));
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(value >> shift));
  }
  return out;
}

bool take_frame(std::string& pending, Frame& frame) {
  if (pending.size() < 9) return false;
  const auto* h = reinterpret_cast<const unsigned char*>(pending.data());
  const std::size_t len = (std::size_t{h[0]} << 16) | (std::size_t{h[1]} << 8) | h[2];
  if (pending.size() < 9 + len) return false;
  frame.type = h[3];
  frame.flags = h[4];
  frame.stream = ((std::uint32_t{h[5]} & 0x7f) << 24) | (std::uint32_t{h[6]} << 16) |
                 (std::uint32_t{h[7]} << 8) | h[8];
  frame.payload.assign(pending, 9, len);
  pending.erase(0, 9 + len);
  return true;
}

namespace {

int connect_from(const std::string& source, std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in from{};
  from.sin_family = AF_INET;
  ::inet_pton(AF_INET, source.c_str(), &from.sin_addr);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // A full accept queue drops SYNs and connect() would retry for minutes: give up after 2 s.
  timeval limit{2, 0}, none{0, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof(none));
  return fd;
}

}  // namespace

int connect_plain(const std::string& source, std::uint16_t port) {
  return connect_from(source, port);
}

TlsConnection TlsConnection::open(SSL_CTX* ctx, const std::string& source, std::uint16_t port,
                                  int read_timeout_ms) {
  TlsConnection c;
  const int fd = connect_from(source, port);
  if (fd < 0) return c;
  timeval tv{read_timeout_ms / 1000, (read_timeout_ms % 1000) * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, fd);
  if (SSL_connect(ssl) != 1) {  // refused or timed out
    SSL_free(ssl);
    ::close(fd);
    ERR_clear_error();
    return c;
  }
  c.fd_ = fd;
  c.ssl_ = ssl;
  return c;
}

TlsConnection::TlsConnection(TlsConnection&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), ssl_(std::exchange(o.ssl_, nullptr)) {}

TlsConnection& TlsConnection::operator=(TlsConnection&& o) noexcept {
  if (this != &o) {
    close();
    fd_ = std::exchange(o.fd_, -1);
    ssl_ = std::exchange(o.ssl_, nullptr);
  }
  return *this;
}

TlsConnection::~TlsConnection() { close(); }

void TlsConnection::close() {
  if (ssl_ != nullptr) SSL_free(ssl_);
  if (fd_ >= 0) ::close(fd_);
  ssl_ = nullptr;
  fd_ = -1;
}

bool TlsConnection::write_all(const std::string& bytes) {
  std::size_t done = 0;
  while (ssl_ != nullptr && done < bytes.size()) {
    const int n = SSL_write(ssl_, bytes.data() + done, static_cast<int>(bytes.size() - done));
    if (n <= 0) {
      ERR_clear_error();
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return ssl_ != nullptr;
}

int TlsConnection::read_some(std::string& pending) {
  if (ssl_ == nullptr) return -1;
  char buf[16384];
  const int n = SSL_read(ssl_, buf, sizeof(buf));
  if (n > 0) {
    pending.append(buf, static_cast<std::size_t>(n));
    return n;
  }
  const int err = SSL_get_error(ssl_, n);
  ERR_clear_error();
  if (err == SSL_ERROR_WANT_READ || (err == SSL_ERROR_SYSCALL && errno == EAGAIN)) return 0;
  return -1;
}

SSL_CTX* attacker_tls_context() {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) return nullptr;
  SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  static const unsigned char kAlpn[] = {2, 'h', '2'};
  SSL_CTX_set_alpn_protos(ctx, kAlpn, sizeof(kAlpn));
  return ctx;
}

void ignore_sigpipe_in_this_thread() {
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
}

}  // namespace privsearch::tools::h2
