// `privsearch cluster demo` (`make cluster-demo`): the provider tier on this machine, start to
// finish, with every process started here and stopped by its pid. Redis (unix socket, AOF on),
// `replicas` privsearch-provider processes sharing one throwaway certificate and their state in
// Redis, HAProxy in front with gRPC health checks. Then: a burst of text searches through the
// balancer from `clients` threads (the collection's queries, encrypted path end to end) during
// which one replica is SIGKILLed and restarted; a private fetch through the balancer; a restart
// of Redis and of every replica; a second, short burst. Prints what an operator wants to see:
// searches attempted and failed, latency, budget counts before and after the restarts (equal:
// none lost), the fetch, and where the logs are.
#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/status.h"

namespace privsearch::tools {

struct ClusterDemoOptions {
  std::filesystem::path index = "build/demo/index-scifact";
  std::filesystem::path queries;  // queries.jsonl; empty: a few built-in queries
  std::filesystem::path work = "build/cluster-demo";
  std::size_t replicas = 3;
  std::size_t clients = 8;
  std::size_t searches_per_client = 25;
  bool fetch = true;  // a private payload fetch (ZipPIR) through the balancer
};

// The figures the demo printed, as JSON (also for tests).
Result<nlohmann::json> run_cluster_demo(const ClusterDemoOptions& options);

}  // namespace privsearch::tools
