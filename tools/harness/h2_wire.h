// Just enough HTTP/2 (RFC 9113) and HPACK (RFC 7541) by hand for the hostile clients of the
// abuse tests (harness/stalled_streams.h, harness/h2_attacks.h): frame headers, literal header
// fields without Huffman coding, a gRPC request's header block, and a TLS connection with ALPN h2
// from a chosen loopback source address. Nothing here is used by the product.
#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace privsearch::tools::h2 {

// Frame types and flags (RFC 9113 section 6).
enum : std::uint8_t {
  kData = 0x0,
  kHeaders = 0x1,
  kRstStream = 0x3,
  kSettings = 0x4,
  kPing = 0x6,
  kGoaway = 0x7,
  kWindowUpdate = 0x8,
  kContinuation = 0x9,
};
inline constexpr std::uint8_t kAck = 0x1, kEndStream = 0x1, kEndHeaders = 0x4;
inline constexpr std::int64_t kDefaultWindow = 65535;
inline constexpr const char* kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

void put_frame_header(std::string& out, std::size_t length, std::uint8_t type, std::uint8_t flags,
                      std::uint32_t stream);
// HPACK integer with an n-bit prefix (RFC 7541 section 5.1); `first` holds the pattern bits.
void put_hpack_int(std::string& out, std::size_t value, int prefix_bits, std::uint8_t first);
// A literal header field without indexing, new name, no Huffman coding.
void put_literal(std::string& out, const std::string& name, const std::string& value);
// The header block of a gRPC POST to `path`.
std::string grpc_request_headers(const std::string& path);
// The gRPC framing of one serialized message: uncompressed, its 4-byte big-endian length, itself.
std::string grpc_message(const std::string& serialized);
// A SETTINGS frame with (id, value) pairs.
std::string settings_frame(std::initializer_list<std::pair<std::uint16_t, std::uint32_t>> values);

// A parsed frame of a received byte stream.
struct Frame {
  std::uint8_t type = 0, flags = 0;
  std::uint32_t stream = 0;
  std::string payload;
};
// Takes the first whole frame off `pending`; false while it is incomplete.
bool take_frame(std::string& pending, Frame& frame);

// A TLS connection (ALPN h2, no certificate verification: an attacker does not care) from
// `source` (any 127/8 address) to 127.0.0.1:port; reads time out after `read_timeout_ms`.
// Owns the socket and the SSL object.
class TlsConnection {
 public:
  static TlsConnection open(SSL_CTX* ctx, const std::string& source, std::uint16_t port,
                            int read_timeout_ms = 100);
  TlsConnection() = default;
  TlsConnection(TlsConnection&& o) noexcept;
  TlsConnection& operator=(TlsConnection&& o) noexcept;
  TlsConnection(const TlsConnection&) = delete;
  TlsConnection& operator=(const TlsConnection&) = delete;
  ~TlsConnection();

  bool ok() const { return ssl_ != nullptr; }
  SSL* ssl() const { return ssl_; }
  bool write_all(const std::string& bytes);
  // Appends what arrives to `pending`: >0 bytes read, 0 nothing within the timeout, -1 closed.
  int read_some(std::string& pending);
  void close();

 private:
  int fd_ = -1;
  SSL* ssl_ = nullptr;
};

// An SSL_CTX for the attackers (TLS client, ALPN h2, no verification); caller frees it.
SSL_CTX* attacker_tls_context();

// Blocks SIGPIPE in the calling thread: the provider closes connections while we write.
void ignore_sigpipe_in_this_thread();

// A TCP connection from `source` to 127.0.0.1:port, nothing sent; -1 when refused.
int connect_plain(const std::string& source, std::uint16_t port);

}  // namespace privsearch::tools::h2
