#include "suites/bench_cluster.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "ckks/param_sets.h"
#include "client/provider_client.h"
#include "client/rerank_session.h"
#include "core/elapsed.h"
#include "core/sha256.h"
#include "harness/measure.h"
#include "harness/progress.h"
#include "harness/random_vectors.h"
#include "harness/spawned_haproxy.h"
#include "harness/spawned_provider.h"
#include "harness/spawned_redis.h"
#include "index/artifacts/manifest.h"
#include "protocol/redis_connection.h"
#include "protocol/redis_ledger.h"

namespace privsearch::tools {
namespace {

using Clock = std::chrono::steady_clock;

// One key epoch and a pool of pre-encrypted requests under it.
struct Epoch {
  std::string key_id;
  std::vector<v1::RerankRequest> requests;
};

Result<Epoch> new_epoch(const ClusterBenchOptions& o, const index::Manifest& manifest,
                        client::ProviderClient& via, std::size_t pool) {
  PRIVSEARCH_ASSIGN_OR_RETURN(auto lit, ckks::preset_literal("rerank-n8192"));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto params, ckks::Params::create(lit));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto session, client::RerankSession::create(params, manifest.dim));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto up, session.make_key_upload(o.k, false));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto upr, via.upload_keys(up));
  if (upr.has_error()) return internal_error("key upload refused: " + upr.error().message());
  session.set_key_id(o.k, upr.key_id());
  Epoch e;
  e.key_id = upr.key_id();
  Prng prng = Prng::create();
  for (std::size_t p = 0; p < pool; ++p) {
    const auto z = random_unit_vector(manifest.dim, prng);
    const auto ids = random_distinct_ids(manifest.documents, o.k, prng);
    PRIVSEARCH_ASSIGN_OR_RETURN(auto pending, session.build_request({z, ids, manifest.version_id}));
    e.requests.push_back(std::move(pending.request));
  }
  return e;
}

// One served rerank's round trip in ms; an error when refused.
Result<double> timed_rerank(client::ProviderClient& via, const v1::RerankRequest& request) {
  const auto t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto r, via.rerank(request));
  const double ms = ms_since(t0);
  if (r.has_error()) return internal_error("rerank refused: " + r.error().message());
  return ms;
}

Result<std::vector<double>> sequential(client::ProviderClient& via, const Epoch& e, std::size_t n) {
  std::vector<double> out;
  for (std::size_t i = 0; i < n; ++i) {
    PRIVSEARCH_ASSIGN_OR_RETURN(const double ms,
                                timed_rerank(via, e.requests[i % e.requests.size()]));
    out.push_back(ms);
  }
  return out;
}

struct Level {
  std::size_t replicas = 0, requests = 0, failures = 0;
  double rps = 0;
  std::vector<double> latency_ms;
};

// Closed loop through the balancer: `clients` connections (least-connection balancing spreads
// them over the replicas) send the pool's requests back to back.
Result<Level> closed_loop(const ClusterBenchOptions& o, const client::ConnectOptions& co,
                          const Epoch& e, std::size_t replicas) {
  std::vector<std::unique_ptr<client::ProviderClient>> conns;
  for (std::size_t c = 0; c < o.clients; ++c) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto conn, client::ProviderClient::connect(co));
    // Warm: the replica behind this connection pulls the key set now, not on the clock.
    PRIVSEARCH_RETURN_IF_ERROR(timed_rerank(*conn, e.requests[c % e.requests.size()]).status());
    conns.push_back(std::move(conn));
  }
  std::atomic<std::size_t> next{0}, failures{0};
  std::vector<std::vector<double>> lat(o.clients);
  const auto t0 = Clock::now();
  std::vector<std::thread> th;
  for (std::size_t c = 0; c < o.clients; ++c) {
    th.emplace_back([&, c] {
      for (;;) {
        const std::size_t i = next++;
        if (i >= o.requests_per_level) return;
        const auto r = timed_rerank(*conns[c], e.requests[i % e.requests.size()]);
        if (r.ok()) {
          lat[c].push_back(*r);
        } else {
          ++failures;
        }
      }
    });
  }
  for (auto& t : th) t.join();
  Level level;
  level.replicas = replicas;
  level.requests = o.requests_per_level;
  level.rps = static_cast<double>(o.requests_per_level) / (ms_since(t0) / 1000);
  level.failures = failures.load();
  for (auto& v : lat) level.latency_ms.insert(level.latency_ms.end(), v.begin(), v.end());
  return level;
}

// Redis's own account of a key's memory (MEMORY USAGE), 0 when absent.
std::size_t redis_memory_usage(protocol::RedisConnection& redis, const std::string& key) {
  const auto r = redis.command({"MEMORY", "USAGE", key});
  if (!r.ok() || (*r)->type != REDIS_REPLY_INTEGER) return 0;
  return static_cast<std::size_t>((*r)->integer);
}

// The processes of one run: the work directory, the replicas' shared certificate, and how a
// provider is started on the index (budgets never run out, no rate limits: the tier's capacity
// is what is measured).
struct Rig {
  const ClusterBenchOptions& o;
  std::filesystem::path work;
  SharedCertificate certificate;
  Result<std::unique_ptr<SpawnedProvider>> launch(const std::string& name,
                                                  const std::vector<std::string>& extra) const {
    ProviderLaunch l(o.index, work / name,
                     {"--threads", std::to_string(o.threads_per_replica), "--no-pir",
                      "--scores-per-key", "1000000000", "--max-concurrent", "256",
                      "--key-uploads-per-minute", "0", "--max-concurrent-per-client", "0"});
    l.extra_args.insert(l.extra_args.end(), extra.begin(), extra.end());
    certificate.apply(l);
    l.trust_proxy_from = {tools::kLoopbackBalancerSource};  // the balancer (PROXY v2)
    return SpawnedProvider::start(l);
  }
};

// A key set uploaded through replica 1 and first used on replica 2: the first rerank's extra
// milliseconds over a warm one. The last key id is kept for the state-bytes figures.
Result<std::vector<double>> key_pull_ms(const ClusterBenchOptions& o, const index::Manifest& m,
                                        const std::vector<std::unique_ptr<SpawnedProvider>>& r,
                                        std::string& last_key_id) {
  PRIVSEARCH_ASSIGN_OR_RETURN(auto a, client::ProviderClient::connect(r[0]->connect_options()));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto b, client::ProviderClient::connect(r[1]->connect_options()));
  std::vector<double> pull_ms;
  for (std::size_t i = 0; i < o.key_pulls; ++i) {
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto e, new_epoch(o, m, *a, 4));
    PRIVSEARCH_ASSIGN_OR_RETURN(const double cold, timed_rerank(*b, e.requests[0]));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto warm, sequential(*b, e, 4));
    pull_ms.push_back(cold - eval::describe(warm).median);
    last_key_id = e.key_id;
  }
  return pull_ms;
}

// One budget charge in Redis, 1,000 times over 64 accounts.
Result<TimingStats> budget_charge_timing(const std::string& url) {
  PRIVSEARCH_ASSIGN_OR_RETURN(auto ledger, protocol::open_redis_ledger(url));
  std::size_t account = 0;
  Status charge_status;
  const auto charge = time_runs(50, 1000, [&] {
    const protocol::BudgetAccount a{fmt::format("bench:{}", account++ % 64), 1u << 30,
                                    protocol::unix_now_s() + 600};
    const auto r = ledger->charge(std::span(&a, 1), 1);
    if (!r.ok()) charge_status = r.status();
  });
  PRIVSEARCH_RETURN_IF_ERROR(charge_status);
  return charge;
}

// What one client's key set and budget counter take in Redis.
nlohmann::json state_bytes(const std::string& url, const std::string& key_id) {
  protocol::RedisConnection conn(*protocol::parse_redis_url(url), 2000);
  const std::string hex =
      to_hex(std::span(reinterpret_cast<const std::uint8_t*>(key_id.data()), key_id.size()));
  const std::size_t key_set = redis_memory_usage(conn, "privsearch:keys:" + hex);
  const std::size_t budget =
      redis_memory_usage(conn, "privsearch:budget:{key:" + hex + "}:key:" + hex);
  return {{"key_set", key_set}, {"budget_counter", budget}, {"total", key_set + budget}};
}

// Online latency at one replica: through the balancer, straight to the replica and to the
// single process, interleaved in rounds so drift on the machine hits all three alike.
struct OnlineLatencies {
  std::vector<double> tier, direct, single;
};
Status interleaved_online(const ClusterBenchOptions& o, client::ProviderClient& tier,
                          client::ProviderClient& direct, const Epoch& e,
                          client::ProviderClient& single, const Epoch& single_epoch,
                          OnlineLatencies& out) {
  PRIVSEARCH_RETURN_IF_ERROR(sequential(tier, e, 5).status());
  PRIVSEARCH_RETURN_IF_ERROR(sequential(direct, e, 5).status());
  PRIVSEARCH_RETURN_IF_ERROR(sequential(single, single_epoch, 5).status());
  const std::size_t n = std::max<std::size_t>(1, o.warm_requests / 8);
  for (std::size_t round = 0; round < 8; ++round) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto t, sequential(tier, e, n));
    out.tier.insert(out.tier.end(), t.begin(), t.end());
    PRIVSEARCH_ASSIGN_OR_RETURN(auto d, sequential(direct, e, n));
    out.direct.insert(out.direct.end(), d.begin(), d.end());
    PRIVSEARCH_ASSIGN_OR_RETURN(auto one, sequential(single, single_epoch, n));
    out.single.insert(out.single.end(), one.begin(), one.end());
  }
  return Status();
}

// The closed-loop throughput through a balancer over the first r replicas, for each r.
Result<std::vector<Level>> measure_levels(const Rig& rig, const index::Manifest& m,
                                          const std::vector<std::unique_ptr<SpawnedProvider>>& rs,
                                          const std::vector<std::string>& addresses,
                                          client::ProviderClient& single, const Epoch& single_epoch,
                                          OnlineLatencies& online) {
  const auto& o = rig.o;
  const Progress progress("bench cluster: ");
  std::vector<Level> levels;
  for (const std::size_t r : o.replicas) {
    BalancerSpec spec;
    spec.replicas.assign(addresses.begin(), addresses.begin() + static_cast<long>(r));
    spec.check_interval_ms = 1000;
    PRIVSEARCH_ASSIGN_OR_RETURN(
        auto balancer, SpawnedHaproxy::start(rig.work / fmt::format("haproxy-{}", r), spec));
    auto co = rs[0]->connect_options();
    co.port = balancer->port();
    PRIVSEARCH_ASSIGN_OR_RETURN(auto cl, client::ProviderClient::connect(co));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto e, new_epoch(o, m, *cl, o.pool));
    if (r == 1) {
      PRIVSEARCH_ASSIGN_OR_RETURN(auto direct,
                                  client::ProviderClient::connect(rs[0]->connect_options()));
      PRIVSEARCH_RETURN_IF_ERROR(
          interleaved_online(o, *cl, *direct, e, single, single_epoch, online));
    }
    PRIVSEARCH_ASSIGN_OR_RETURN(auto level, closed_loop(o, co, e, r));
    progress(
        fmt::format("{} replica(s): {:.1f} requests/s, {} failures", r, level.rps, level.failures));
    levels.push_back(std::move(level));
  }
  return levels;
}

void put_levels(nlohmann::json& out, const std::vector<Level>& levels) {
  nlohmann::json throughput, per_level = nlohmann::json::array();
  std::size_t failures = 0;
  for (const auto& l : levels) {
    throughput[std::to_string(l.replicas)] = l.rps;
    failures += l.failures;
    per_level.push_back({{"replicas", l.replicas},
                         {"requests", l.requests},
                         {"throughput_rps", l.rps},
                         {"latency_ms", latency_summary(l.latency_ms)},
                         {"failures", l.failures}});
  }
  out["throughput_rps"] = throughput;
  out["levels"] = per_level;
  if (levels.size() >= 2 && levels.front().rps > 0) {
    nlohmann::json scaling;
    for (const auto& l : levels) scaling[std::to_string(l.replicas)] = l.rps / levels.front().rps;
    out["throughput_scaling"] = scaling;
  }
  out["failures"] = failures;
}

void put_online(nlohmann::json& out, const OnlineLatencies& online) {
  out["online_ms"] = latency_summary(online.tier);
  out["single_process_online_ms"] = latency_summary(online.single);
  out["replica_direct_online_ms"] = latency_summary(online.direct);
  if (!online.tier.empty() && !online.single.empty()) {
    out["online_ratio_vs_single_process"] =
        eval::describe(online.tier).median / eval::describe(online.single).median;
  }
}

Status check_cluster_options(const ClusterBenchOptions& o) {
  if (!std::filesystem::exists(o.index / "manifest.json")) {
    return not_found_error("bench cluster: no index at `" + o.index.string() +
                           "` (run `make demo` first or pass --index DIR)");
  }
  if (o.replicas.empty() || o.clients == 0 || o.pool == 0) {
    return invalid_argument_error("bench cluster: replicas, clients and pool must be non-empty");
  }
  return Status();
}

}  // namespace

Result<nlohmann::json> run_cluster_bench(const ClusterBenchOptions& o) {
  PRIVSEARCH_RETURN_IF_ERROR(check_cluster_options(o));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto v,
                              version::IndexVersion::open(o.index, version::tool_spec()));
  const auto& manifest = v.manifest();
  if (o.k == 0 || o.k > manifest.documents) {
    return invalid_argument_error("bench cluster: K outside [1, N]");
  }
  const Progress progress("bench cluster: ");
  const auto work = std::filesystem::absolute(o.index).parent_path() / "bench-cluster";
  std::filesystem::remove_all(work);
  std::filesystem::create_directories(work);
  PRIVSEARCH_ASSIGN_OR_RETURN(auto certificate, write_shared_certificate(work));
  const Rig rig{o, work, std::move(certificate)};

  // The embedded default: one process, budgets in its journal file, no balancer; timed in the
  // same rounds as the tier.
  progress("single process (embedded default)");
  PRIVSEARCH_ASSIGN_OR_RETURN(auto single, rig.launch("single", {}));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto single_client,
                              client::ProviderClient::connect(single->connect_options()));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto single_epoch,
                              new_epoch(o, manifest, *single_client, o.pool));

  PRIVSEARCH_ASSIGN_OR_RETURN(auto redis, SpawnedRedis::start(work / "redis"));
  const std::string url = redis->url();
  const std::size_t max_replicas = *std::max_element(o.replicas.begin(), o.replicas.end());
  std::vector<std::unique_ptr<SpawnedProvider>> replicas;
  std::vector<std::string> addresses;
  for (std::size_t i = 0; i < std::max<std::size_t>(max_replicas, 2); ++i) {
    progress(fmt::format("replica {} on {}", i + 1, url));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto p,
                                rig.launch(fmt::format("replica-{}", i + 1), {"--state", url}));
    addresses.push_back(fmt::format("127.0.0.1:{}", p->port()));
    replicas.push_back(std::move(p));
  }
  progress("key pulls");
  std::string last_key_id;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto pull_ms, key_pull_ms(o, manifest, replicas, last_key_id));
  progress("budget charges in Redis");
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto charge, budget_charge_timing(url));
  const auto bytes = state_bytes(url, last_key_id);
  OnlineLatencies online;
  PRIVSEARCH_ASSIGN_OR_RETURN(
      const auto levels,
      measure_levels(rig, manifest, replicas, addresses, *single_client, single_epoch, online));

  nlohmann::json out{{"suite", "cluster"},
                     {"machine", machine_description()},
                     {"index", o.index.string()},
                     {"docs", manifest.documents},
                     {"dim", manifest.dim},
                     {"k", o.k},
                     {"threads_per_replica", o.threads_per_replica},
                     {"clients", o.clients}};
  put_levels(out, levels);
  put_online(out, online);
  out["budget_check_ms"] = {{"median", charge.median_us / 1000},
                            {"p95", charge.p95_us / 1000},
                            {"p99", charge.p99_us / 1000}};
  out["key_pull_ms"] = latency_summary(pull_ms);
  out["state_bytes_per_client"] = bytes["total"];
  out["state_bytes"] = {{"key_set", bytes["key_set"]}, {"budget_counter", bytes["budget_counter"]}};
  out["setup"] = fmt::format(
      "Redis 7 on a unix socket (AOF on), HAProxy 2.6 TLS passthrough with gRPC health checks, "
      "{} provider replica(s) with --threads {}; all on one {}-core machine",
      max_replicas, o.threads_per_replica, std::thread::hardware_concurrency());
  return out;
}

}  // namespace privsearch::tools
