// Per-phase deadlines for the browser endpoint's connections (server/web_gateway.h).
//
// Why: httplib's read and write timeouts bound ONE read or write. A client that trickles a byte
// every few seconds passes each of them and holds one of the endpoint's few connection threads
// for as long as it likes (a slowloris); a thousand such clients hold them all. So each
// connection carries one deadline at a time, for the phase it is in, and one lifetime cap:
//
//   TLS handshake + request head     head                      armed when the handshake starts
//   body + handler + response        transfer (+ rpc deadline, re-armed by the gateway's
//                                    or + size / minimum rate)  handlers once they know the work
//   idle keep-alive + next head      keep-alive + head          re-armed after each response
//   never past                       start + lifetime
//
// A watchdog thread shuts down (shutdown(2), never close(2)) the socket of a connection past its
// deadline: the worker's blocked read or write returns, httplib closes the connection, and the
// thread serves the next one. The socket is only shut down under the lock that forget() takes
// before the SSL object (and then the descriptor) is released, so a reused descriptor is never
// touched.
//
// How a connection is known without httplib's help: httplib serves a connection on one worker
// thread from the TLS handshake to its close. An SSL info callback on the server's context sees
// the handshake start (on that thread) and registers the connection as the thread's current
// one; arm_current() re-arms it from the handlers; the SSL object's ex_data free callback
// forgets it. Renegotiation is switched off (install()), so a handshake starts once per
// connection.
#pragma once

#include <openssl/ssl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace privsearch::server {

class ConnectionDeadlines {
 public:
  using Clock = std::chrono::steady_clock;

  // head: the handshake and the first request head; lifetime: the cap on any connection.
  ConnectionDeadlines(Clock::duration head, Clock::duration lifetime);
  ~ConnectionDeadlines();  // stops the watchdog
  ConnectionDeadlines(const ConnectionDeadlines&) = delete;
  ConnectionDeadlines& operator=(const ConnectionDeadlines&) = delete;

  // Hooks the server's TLS context (info callback, this object in its ex_data) and switches
  // renegotiation off. The object must outlive every connection of the context.
  bool install(SSL_CTX& ctx);
  // The connection the calling thread serves gets the deadline now + d (never past its
  // lifetime's end; a connection already cut stays cut). No-op off a connection thread.
  void arm_current(Clock::duration d);
  std::uint64_t cut() const { return cut_.load(); }  // connections shut down so far

 private:
  struct Connection {
    int fd = -1;
    Clock::time_point start, deadline;
    bool cut = false;
  };
  static int connection_slot();
  static void on_info(const SSL* ssl, int where, int ret);
  static void on_free(void* parent, void* ptr, CRYPTO_EX_DATA* ad, int idx, long argl, void* argp);
  void begin(SSL* ssl);
  void forget(const SSL* ssl);
  void watch();

  const Clock::duration head_, lifetime_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::unordered_map<const SSL*, Connection> open_;
  std::atomic<std::uint64_t> cut_{0};
  bool stopping_ = false;
  std::thread watchdog_;
};

}  // namespace privsearch::server
