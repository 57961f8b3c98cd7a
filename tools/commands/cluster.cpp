// `privsearch cluster haproxy ...`: the HAProxy configuration for provider replicas behind one
// address (TLS passed through to replicas that share a certificate; connections capped in total
// and per source address; health checks). Prints it, or checks and writes it with --out.
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "commands/command.h"
#include "core/bytes.h"
#include "harness/spawned_haproxy.h"
#include "index/atomic_file.h"

namespace privsearch::tools {
namespace {

struct ClusterArgs {
  BalancerSpec spec;
  std::string listen = "127.0.0.1:50051";
  std::filesystem::path out;
};

int run_haproxy_config(ClusterArgs& a) {
  const auto colon = a.listen.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return fail(Status(StatusCode::kInvalidArgument, "--listen HOST:PORT"), "cluster");
  }
  a.spec.listen_host = a.listen.substr(0, colon);
  const long port = std::strtol(a.listen.c_str() + colon + 1, nullptr, 10);
  if (port <= 0 || port > 65535) {
    return fail(Status(StatusCode::kInvalidArgument, "--listen: port out of range"), "cluster");
  }
  a.spec.port = static_cast<std::uint16_t>(port);
  for (const auto& r : a.spec.replicas) {
    if (r.rfind(':') == std::string::npos) {
      return fail(Status(StatusCode::kInvalidArgument, "--replica `" + r + "`: HOST:PORT"),
                  "cluster");
    }
  }
  const std::string cfg = haproxy_config(a.spec);
  if (a.out.empty()) {
    fmt::print("{}", cfg);
    return 0;
  }
  if (const Status s = index::write_bytes_atomically(a.out, byte_view(cfg)); !s.ok()) {
    return fail(s, "cluster");
  }
  fmt::print(stderr, "wrote {} (check it with: haproxy -c -f {})\n", a.out.string(),
             a.out.string());
  return 0;
}

}  // namespace

Command add_cluster_command(CLI::App& parent) {
  auto* cmd = parent.add_subcommand("cluster", "Configuration for provider replicas behind one address");
  cmd->require_subcommand(1);
  auto* haproxy = cmd->add_subcommand(
      "haproxy",
      "HAProxy 2.6 configuration: TLS passed through to the replicas (start them with the same "
      "--cert/--key; clients pin that certificate), connections capped in total and per source "
      "address, health checks, least-connection balancing, redispatch when a replica is down");
  auto a = std::make_shared<ClusterArgs>();
  haproxy->add_option("--replica", a->spec.replicas, "A provider replica, HOST:PORT (repeat)")
      ->required();
  haproxy->add_option("--listen", a->listen, "Address clients connect to (default 127.0.0.1:50051)");
  haproxy->add_option("--max-connections", a->spec.max_connections,
                      "Connections in total (default 4096)")
      ->check(CLI::Range(1u, 1000000u));
  haproxy->add_option("--max-connections-per-source", a->spec.max_connections_per_source,
                      "Connections per client address (default 64)")
      ->check(CLI::Range(1u, 1000000u));
  haproxy->add_option("--check-interval-ms", a->spec.check_interval_ms,
                      "Health-check interval (default 1000)")
      ->check(CLI::Range(100u, 60000u));
  haproxy->add_option("--out", a->out, "Write the configuration here (default: standard output)");
  return {cmd, [a] { return run_haproxy_config(*a); }};
}

}  // namespace privsearch::tools
