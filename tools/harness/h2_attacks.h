// Hostile clients for the transport attacks of the abuse tests and `bench abuse`
// (docs/SECURITY.md's table), each speaking HTTP/2 by hand (harness/h2_wire.h) from loopback source
// addresses:
//
//  - UnreadResponses: connections that set SETTINGS_INITIAL_WINDOW_SIZE = 0 and open many
//    streams whose answers they never read (no WINDOW_UPDATE), reconnecting when dropped. Against
//    gRPC 1.51 directly each stream holds a server thread until the stream dies.
//  - ContinuationFlood: a HEADERS frame without END_HEADERS followed by CONTINUATION frames of
//    ~16 KB, each with new 3 KB header fields, never ending the block (CVE-2023-33953: gRPC 1.51
//    keeps all of it), reconnecting until `total_bytes` are sent.
//  - ConnectionFlood: plain TCP connections that send nothing, from many source addresses
//    (CVE-2023-4785: gRPC 1.51's accept loop stops for good when descriptors run out), held until
//    release() or destruction.
//
// Every thread is joined and every socket closed by the destructor; loopback only.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/status.h"

namespace privsearch::tools {

struct UnreadResponsesSpec {
  std::uint16_t port = 0;
  std::string source = "127.0.0.1";
  std::size_t connections = 4;
  std::size_t streams_per_connection = 32;
  std::string rpc_path = "/privsearch.v1.Provider/GetServerInfo";
  std::string request;  // the serialized protobuf every stream sends (at most 16 KB); empty: {}
};

class UnreadResponses {
 public:
  static Result<std::unique_ptr<UnreadResponses>> start(const UnreadResponsesSpec& spec);
  ~UnreadResponses();
  UnreadResponses(const UnreadResponses&) = delete;
  UnreadResponses& operator=(const UnreadResponses&) = delete;

  std::uint64_t streams_opened() const { return opened_.load(); }
  std::uint64_t connections_dropped() const { return dropped_.load(); }

 private:
  UnreadResponses() = default;
  void run();
  UnreadResponsesSpec spec_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> opened_{0}, dropped_{0};
  std::vector<std::thread> threads_;
  void* ctx_ = nullptr;  // SSL_CTX*
};

struct ContinuationFloodSpec {
  std::uint16_t port = 0;
  std::string source = "127.0.0.1";
  std::size_t connections = 2;             // in parallel
  std::uint64_t total_bytes = 256u << 20;  // over all connections, reconnecting
};

class ContinuationFlood {
 public:
  static Result<std::unique_ptr<ContinuationFlood>> start(const ContinuationFloodSpec& spec);
  ~ContinuationFlood();
  ContinuationFlood(const ContinuationFlood&) = delete;
  ContinuationFlood& operator=(const ContinuationFlood&) = delete;

  // Until total_bytes are sent or every connection attempt is refused.
  void wait();
  std::uint64_t bytes_sent() const { return sent_.load(); }
  std::uint64_t connections_made() const { return made_.load(); }
  // The largest header block (bytes after HEADERS) the server took before closing.
  std::uint64_t longest_block() const { return longest_.load(); }

 private:
  ContinuationFlood() = default;
  void run();
  ContinuationFloodSpec spec_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> sent_{0}, made_{0}, longest_{0};
  std::vector<std::thread> threads_;
  void* ctx_ = nullptr;  // SSL_CTX*
};

struct ConnectionFloodSpec {
  std::uint16_t port = 0;
  std::size_t sources = 20;  // 127.0.0.10, 127.0.0.11, ...
  std::size_t connections_per_source = 55;
  std::size_t attempts_from_one = 0;  // then this many more attempts from 127.0.0.9
};

class ConnectionFlood {
 public:
  // Makes the connections (blocking); kUnavailable when none could be made.
  static Result<std::unique_ptr<ConnectionFlood>> start(const ConnectionFloodSpec& spec);
  ~ConnectionFlood();  // release()
  ConnectionFlood(const ConnectionFlood&) = delete;
  ConnectionFlood& operator=(const ConnectionFlood&) = delete;

  std::size_t connected() const { return fds_.size(); }
  // Of the connections made, how many the server still holds open (not closed by it).
  std::size_t still_open() const;
  void release();

 private:
  ConnectionFlood() = default;
  std::vector<int> fds_;
};

// `count` (<= 32) unary gRPC calls of `path` with the serialized protobuf `request`, on one TLS
// connection from `source` (any 127/8 address: what a gRPC client cannot choose); the response
// messages without their gRPC framing, one per call that returned one within `timeout`.
// kUnavailable when no connection could be made.
// `extra_headers` are sent with every call (a forged x-privsearch-peer, say).
Result<std::vector<std::string>> raw_unary_calls(
    std::uint16_t port, const std::string& source, const std::string& path,
    const std::string& request, std::size_t count, int timeout_ms = 10000,
    const std::vector<std::pair<std::string, std::string>>& extra_headers = {});

// `calls` empty UploadKeys calls from `source`, one at a time (concurrent ones would meet the
// per-client share of workers first and be refused OVERLOADED without spending a rate token):
// how many the provider refused RATE_LIMITED. kUnavailable when one got no answer.
Result<std::size_t> rate_limited_uploads(
    std::uint16_t port, const std::string& source, std::size_t calls,
    const std::vector<std::pair<std::string, std::string>>& extra_headers = {});

// Raises this process's soft descriptor limit to its hard limit (the attackers need many).
void raise_fd_limit();

}  // namespace privsearch::tools
