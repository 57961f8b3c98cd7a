// HAProxy (Debian's 2.6) in front of provider replicas, for tests and the cluster tier: TLS
// passes through (mode tcp), so clients pin the one certificate the replicas share, and the
// balancer adds a cap on connections in total and per source address (a stick table of each
// source's current connections), health checks and least-connection balancing, and tells each
// replica's front who the client is (PROXY protocol v2). The configuration is generated
// (haproxy_config) and the process started in the foreground and stopped by its pid. Thread safety:
// one owner.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace privsearch::tools {

struct BalancerSpec {
  std::string listen_host = "127.0.0.1";
  std::uint16_t port = 0;             // 0: a free loopback port is chosen (SpawnedHaproxy)
  std::vector<std::string> replicas;  // provider addresses, HOST:PORT
  unsigned max_connections = 4096;    // in total
  unsigned max_connections_per_source = 64;
  unsigned check_interval_ms = 1000;
  unsigned message_deadline_s = 330;  // client/server inactivity timeouts
  // Each replica connection (and health check) starts with a PROXY protocol v2 header naming
  // the client, so a replica's front counts clients, not the balancer; the replicas run with
  // --front-trust-proxy-from <this balancer> (ProviderLaunch::trust_proxy_from).
  bool send_proxy = true;
  // The address the balancer connects to the replicas from (haproxy `source`); empty: the
  // system's choice. SpawnedHaproxy uses kLoopbackBalancerSource when empty.
  std::string source;
};

// The loopback address the harness's balancers (tests, benches, the cluster demo) connect to
// replicas from, and the one their replicas trust PROXY v2 headers from: a client connecting
// straight to a replica from 127.0.0.1 is then an ordinary client, not an unproxied balancer.
inline constexpr const char* kLoopbackBalancerSource = "127.0.0.254";

// The haproxy.cfg text for `spec` (every limit named in a comment).
std::string haproxy_config(const BalancerSpec& spec);

class SpawnedHaproxy {
 public:
  // Writes dir/haproxy.cfg, checks it (haproxy -c) and starts haproxy; kUnavailable when
  // haproxy is missing, the configuration is refused, or it does not listen within 10 s.
  static Result<std::unique_ptr<SpawnedHaproxy>> start(const std::filesystem::path& dir,
                                                       BalancerSpec spec);
  ~SpawnedHaproxy();
  SpawnedHaproxy(const SpawnedHaproxy&) = delete;
  SpawnedHaproxy& operator=(const SpawnedHaproxy&) = delete;

  std::uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  int stop();

 private:
  SpawnedHaproxy() = default;
  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
};

}  // namespace privsearch::tools
