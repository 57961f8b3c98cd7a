// `privsearch bench cluster --json --replicas 1,2,3`: the provider tier on this
// machine. Redis (unix socket), HAProxy and up to max(replicas) privsearch-provider processes on
// loopback, all sharing budgets and key sets through Redis, each with one worker thread, all
// started here and stopped by their pids. Reports:
//   throughput_rps           closed loop through the balancer per replica count (`clients`
//                            connections sending pre-encrypted requests back to back, as
//                            `bench systems` does), with latency and failures per level
//   online_ms                one client's warm requests through the balancer (1 replica) next
//                            to the single process of the embedded default (journal file, no
//                            balancer): the cost of the tier per request
//   budget_check_ms          one budget charge in Redis (the round trip a request adds)
//   key_pull_ms              first request on a replica that has not seen the key id, minus a
//                            warm request there (pull from Redis + decode + cache)
//   state_bytes_per_client   Redis memory of one client's key set and budget counter
// On 2 cores the replicas share the CPU: the scaling figure is what this machine allows, not a
// per-core model (docs/DEPLOY.md does that arithmetic).
#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/status.h"

namespace privsearch::tools {

struct ClusterBenchOptions {
  std::filesystem::path index = "build/demo/index-scifact";
  std::size_t k = 100;
  std::vector<std::size_t> replicas = {1, 2, 3};
  std::size_t clients = 6;  // closed-loop connections per level
  std::size_t requests_per_level = 240;
  std::size_t pool = 16;           // pre-encrypted requests
  std::size_t warm_requests = 40;  // sequential, for online_ms
  std::size_t key_pulls = 5;       // key epochs timed for key_pull_ms
  unsigned threads_per_replica = 1;
};

Result<nlohmann::json> run_cluster_bench(const ClusterBenchOptions& options);

}  // namespace privsearch::tools
