// A hostile client for the abuse tests and `bench abuse`: HTTP/2 streams over TLS that announce
// a large gRPC message and never finish it (the first abuse class of docs/SECURITY.md).
//
// Each connection speaks just enough HTTP/2 (RFC 9113) by hand to do what no well-behaved gRPC
// client can: the preface and SETTINGS, one HEADERS frame per stream (HPACK literals without
// Huffman coding, RFC 7541 section 6.2.2) for a POST to `rpc_path`, then DATA carrying the 5-byte
// gRPC prefix that announces `announced_bytes` and as much of the body as the provider's flow
// control windows grant, stopping one byte short. It answers SETTINGS and PING so the provider
// keeps the connection, and counts what the provider does about it (RST_STREAM, GOAWAY, closing).
// Loopback only; every thread is joined by the destructor.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"

namespace privsearch::tools {

struct StalledStreamsSpec {
  std::uint16_t port = 0;            // on 127.0.0.1
  std::string source = "127.0.0.1";  // the attacker's own loopback address (any of 127/8)
  std::size_t connections = 20;
  std::size_t streams_per_connection = 10;
  std::size_t announced_bytes = 8u << 20;
  std::string rpc_path = "/privsearch.v1.Provider/UploadKeys";
};

class StalledStreams {
 public:
  // Connects and starts sending; kUnavailable when not one connection could be made.
  static Result<std::unique_ptr<StalledStreams>> start(const StalledStreamsSpec& spec);
  ~StalledStreams();  // closes every connection and joins the threads
  StalledStreams(const StalledStreams&) = delete;
  StalledStreams& operator=(const StalledStreams&) = delete;

  std::uint64_t body_bytes_sent() const { return sent_.load(); }
  // Streams the provider reset (RST_STREAM) and connections it ended (GOAWAY or close).
  std::uint64_t streams_reset() const { return resets_.load(); }
  std::uint64_t connections_closed() const { return closed_.load(); }
  std::size_t connections() const { return threads_.size(); }

 private:
  struct Connection;  // one connection's windows and unsent bodies
  StalledStreams() = default;
  void run(std::size_t index);  // one connection's loop
  // Sends what the windows allow; false when the provider closed the connection.
  bool send_bodies(Connection& c);
  // Answers SETTINGS and PING, applies WINDOW_UPDATE, counts RST_STREAM.
  bool handle_frames(Connection& c);

  StalledStreamsSpec spec_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> sent_{0}, resets_{0}, closed_{0};
  std::vector<std::unique_ptr<Connection>> connections_;
  std::vector<std::thread> threads_;
  void* ctx_ = nullptr;  // SSL_CTX*
};

}  // namespace privsearch::tools
