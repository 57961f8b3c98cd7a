// `privsearch cluster haproxy ...`: the HAProxy configuration for provider replicas behind one
// address (TLS passed through to replicas that share a certificate; connections capped in total
// and per source address; health checks). Prints it, or checks and writes it with --out.
// `privsearch cluster demo`: the whole tier on this machine (experiments/cluster_demo.h).
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "commands/command.h"
#include "core/bytes.h"
#include "experiments/cluster_demo.h"
#include "harness/spawned_haproxy.h"
#include "index/artifacts/atomic_file.h"

namespace privsearch::tools {
namespace {

struct ClusterArgs {
  BalancerSpec spec;
  std::string listen = "127.0.0.1:50051";
  std::filesystem::path out;
  ClusterDemoOptions demo;
  bool json = false;
};

int run_demo(const ClusterArgs& a) {
  auto r = run_cluster_demo(a.demo);
  if (!r.ok()) return fail(r.status(), "cluster demo");
  if (a.json) fmt::print("{}\n", r->dump(2));
  const auto failed = (*r)["searches_failed"].get<std::size_t>();
  const auto& counts = (*r)["budget_counts"];
  return failed == 0 && counts["before"] == counts["after"] ? 0 : 1;
}

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
  auto* cmd = parent.add_subcommand(
      "cluster",
      "Provider replicas behind one address: HAProxy configuration, and a demo of the tier");
  cmd->require_subcommand(1);
  auto* haproxy = cmd->add_subcommand(
      "haproxy",
      "HAProxy 2.6 configuration: TLS passed through to the replicas (start them with the same "
      "--cert/--key; clients pin that certificate), connections capped in total and per source "
      "address, health checks, least-connection balancing, redispatch when a replica is down, "
      "and each replica told the client's address by a PROXY protocol v2 header (start the "
      "replicas with --front-trust-proxy-from <this balancer's address>, so their per-address "
      "limits count clients, not the balancer)");
  auto a = std::make_shared<ClusterArgs>();
  haproxy->add_option("--replica", a->spec.replicas, "A provider replica, HOST:PORT (repeat)")
      ->required();
  haproxy->add_option("--listen", a->listen,
                      "Address clients connect to (default 127.0.0.1:50051)");
  haproxy
      ->add_option("--max-connections", a->spec.max_connections,
                   "Connections in total (default 4096)")
      ->check(CLI::Range(1u, 1000000u));
  haproxy
      ->add_option("--max-connections-per-source", a->spec.max_connections_per_source,
                   "Connections per client address (default 64)")
      ->check(CLI::Range(1u, 1000000u));
  haproxy
      ->add_option("--check-interval-ms", a->spec.check_interval_ms,
                   "Health-check interval (default 1000)")
      ->check(CLI::Range(100u, 60000u));
  haproxy->add_flag("!--no-proxy-protocol", a->spec.send_proxy,
                    "Do not send PROXY v2 to the replicas (replicas with --front none, or an "
                    "older provider); every anonymous client then shares the balancer's address");
  haproxy->add_option("--out", a->out, "Write the configuration here (default: standard output)");

  auto* demo = cmd->add_subcommand(
      "demo",
      "The provider tier on this machine, start to finish: Redis, provider replicas sharing "
      "budgets, key sets and PIR state in it, HAProxy in front; a burst of searches during which "
      "a replica is SIGKILLed and restarted, a private fetch, a restart of Redis and every "
      "replica; prints searches attempted/failed and budget counts before/after. Every process "
      "it starts is stopped by its pid. Exit status 1 when a search failed or a count was lost");
  demo->add_option("--index", a->demo.index,
                   "Index directory (default build/demo/index-scifact: run `make demo` first)");
  demo->add_option("--queries", a->demo.queries,
                   "queries.jsonl of the collection (default: three built-in queries)");
  demo->add_option("--work", a->demo.work,
                   "Working directory: certificate, Redis, logs (default build/cluster-demo; "
                   "emptied first)");
  demo->add_option("--replicas", a->demo.replicas, "Provider replicas (default 3)")
      ->check(CLI::Range(std::size_t{2}, std::size_t{8}));
  demo->add_option("--clients", a->demo.clients, "Concurrent search clients (default 8)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{64}));
  demo->add_option("--searches", a->demo.searches_per_client,
                   "Searches per client in the burst (default 25)")
      ->check(CLI::Range(std::size_t{3}, std::size_t{10000}));
  demo->add_flag("!--no-fetch", a->demo.fetch, "Skip the private fetch (~30 s of hint work)");
  demo->add_flag("--json", a->json, "Also print the figures as one JSON object at the end");
  return {cmd, [a, demo] { return demo->parsed() ? run_demo(*a) : run_haproxy_config(*a); }};
}

}  // namespace privsearch::tools
