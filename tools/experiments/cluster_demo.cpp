#include "experiments/cluster_demo.h"

#include <fmt/format.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "client/payload_fetcher.h"
#include "client/provider_client.h"
#include "client/search_client.h"
#include "core/elapsed.h"
#include "harness/measure.h"
#include "harness/spawned_haproxy.h"
#include "harness/spawned_provider.h"
#include "harness/spawned_redis.h"
#include "index/encoders/beir.h"
#include "protocol/redis_connection.h"

namespace privsearch::tools {
namespace {

using Clock = std::chrono::steady_clock;

// Calls `fn` for every key matching `pattern` (SCAN, not KEYS: it does not block Redis).
Status for_each_key(protocol::RedisConnection& redis, const std::string& pattern,
                    const std::function<Status(const std::string&)>& fn) {
  std::string cursor = "0";
  do {
    auto r = redis.command({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
    PRIVSEARCH_RETURN_IF_ERROR(redis.check(r, "SCAN"));
    const redisReply* reply = r->get();
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2) {
      return redis.unavailable("SCAN: unexpected reply");
    }
    cursor = protocol::reply_string(reply->element[0]).value_or("0");
    for (std::size_t i = 0; i < reply->element[1]->elements; ++i) {
      if (const auto key = protocol::reply_string(reply->element[1]->element[i])) {
        PRIVSEARCH_RETURN_IF_ERROR(fn(*key));
      }
    }
  } while (cursor != "0");
  return Status();
}

// Every request budget counter in Redis, summed.
Result<std::uint64_t> budget_total(const std::string& url) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto parsed, protocol::parse_redis_url(url));
  protocol::RedisConnection redis(parsed, 2000);
  std::uint64_t total = 0;
  const Status scanned =
      for_each_key(redis, "privsearch:budget:*", [&](const std::string& key) -> Status {
        auto v = redis.command({"GET", key});
        PRIVSEARCH_RETURN_IF_ERROR(redis.check(v, "GET"));
        total += std::stoull(protocol::reply_string(v->get()).value_or("0"));
        return Status();
      });
  PRIVSEARCH_RETURN_IF_ERROR(scanned);
  return total;
}

// Redis memory by kind of state (MEMORY USAGE): what one deployment must provision.
Result<nlohmann::json> state_bytes(const std::string& url) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto parsed, protocol::parse_redis_url(url));
  protocol::RedisConnection redis(parsed, 2000);
  std::map<std::string, std::pair<std::size_t, std::size_t>> kinds;  // kind -> (keys, bytes)
  const Status scanned = for_each_key(redis, "privsearch:*", [&](const std::string& key) -> Status {
    // privsearch:keys:.., privsearch:budget:.., privsearch:pir:{c}:hints:v -> "pir hints"
    std::string kind = key.substr(11, key.find(':', 11) - 11);
    if (kind == "pir") {
      const auto close = key.find("}:");
      kind = close == std::string::npos
                 ? "pir " + key.substr(15)
                 : "pir " + key.substr(close + 2, key.find(':', close + 2) - close - 2);
    }
    auto u = redis.command({"MEMORY", "USAGE", key});
    PRIVSEARCH_RETURN_IF_ERROR(redis.check(u, "MEMORY USAGE"));
    auto& [count, bytes] = kinds[kind];
    ++count;
    if ((*u)->type == REDIS_REPLY_INTEGER) bytes += static_cast<std::size_t>((*u)->integer);
    return Status();
  });
  PRIVSEARCH_RETURN_IF_ERROR(scanned);
  nlohmann::json out;
  for (const auto& [kind, cb] : kinds) out[kind] = {{"keys", cb.first}, {"bytes", cb.second}};
  return out;
}

struct Burst {
  std::size_t attempted = 0, failed = 0;
  std::vector<double> latency_ms;
  std::vector<std::string> errors;  // the first few
  double seconds = 0;
};

// `clients` threads, each with its own SearchClient through the balancer, run `per_client`
// searches over `queries`; `during` runs on this thread once a third of them are done.
Burst burst(const std::filesystem::path& index, const client::ConnectOptions& co,
            const std::vector<std::string>& queries, std::size_t clients, std::size_t per_client,
            const std::function<void()>& during) {
  Burst out;
  std::mutex mu;
  std::atomic<std::size_t> done{0};
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (std::size_t c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      auto note = [&](const Status& s) {
        std::lock_guard lock(mu);
        ++out.failed;
        if (out.errors.size() < 5) out.errors.push_back(s.to_string());
      };
      auto transport = client::ProviderClient::connect(co);
      auto sc = transport.ok() ? client::SearchClient::open(index, std::move(transport).value())
                               : Result<std::unique_ptr<client::SearchClient>>(transport.status());
      for (std::size_t i = 0; i < per_client; ++i) {
        {
          std::lock_guard lock(mu);
          ++out.attempted;
        }
        if (!sc.ok()) {
          note(sc.status());
        } else {
          const auto t = Clock::now();
          const auto r = (*sc)->search(
              client::Query::text(queries[(c * per_client + i) % queries.size()]), {});
          if (r.ok()) {
            std::lock_guard lock(mu);
            out.latency_ms.push_back(ms_since(t));
          } else {
            note(r.status());
          }
        }
        ++done;
      }
    });
  }
  if (during) {
    const auto until = Clock::now() + std::chrono::minutes(5);
    while (done.load() < clients * per_client / 3 && Clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    during();
  }
  for (auto& t : threads) t.join();
  out.seconds = ms_since(t0) / 1000;
  return out;
}

nlohmann::json describe(const Burst& b) {
  return {{"searches_attempted", b.attempted},
          {"searches_failed", b.failed},
          {"searches_per_s", b.seconds > 0 ? static_cast<double>(b.attempted) / b.seconds : 0},
          {"search_ms", latency_summary(b.latency_ms)},
          {"errors", b.errors}};
}

// The demo's queries: three built-in ones, or the --queries file's.
Result<std::vector<std::string>> demo_queries(const ClusterDemoOptions& o) {
  if (o.queries.empty()) {
    return std::vector<std::string>{"vitamin D deficiency and cancer risk",
                                    "antibiotic resistance in hospital bacteria",
                                    "stem cells regenerate heart tissue"};
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto loaded, index::load_queries(o.queries));
  if (loaded.empty()) {
    return invalid_argument_error("cluster demo: no queries in " + o.queries.string());
  }
  std::vector<std::string> queries;
  for (const auto& q : loaded) queries.push_back(q.text);
  return queries;
}

void step(const std::string& s) { fmt::print("\n== {}\n", s); }

// The tier the demo runs: Redis, the replicas (one shared throwaway certificate, their request
// logs in their work directories) and the balancer, all on loopback and stopped by pid.
struct Tier {
  const ClusterDemoOptions& o;
  std::filesystem::path work;
  std::optional<SharedCertificate> certificate;
  std::unique_ptr<SpawnedRedis> redis;
  std::vector<std::unique_ptr<SpawnedProvider>> replicas;
  std::vector<std::string> addresses;
  std::unique_ptr<SpawnedHaproxy> balancer;

  Result<std::unique_ptr<SpawnedProvider>> launch(std::size_t i, const std::string& listen) const {
    ProviderLaunch l(
        o.index, work / fmt::format("replica-{}", i + 1),
        {"--state", redis->url(), "--threads", "1", "--max-concurrent-per-client", "0"});
    l.listen = listen;
    certificate->apply(l);
    l.trust_proxy_from = {tools::kLoopbackBalancerSource};  // the balancer (PROXY v2)
    l.quiet = false;  // one JSON line per request, in the replica's provider.log
    l.log_file = l.work_dir / "provider.log";
    return SpawnedProvider::start(l);
  }

  Status start() {
    PRIVSEARCH_ASSIGN_OR_RETURN(certificate, write_shared_certificate(work));
    PRIVSEARCH_ASSIGN_OR_RETURN(redis, SpawnedRedis::start(work / "redis"));
    fmt::print("redis-server pid {} at {} (appendonly yes)\n", redis->pid(), redis->url());
    for (std::size_t i = 0; i < o.replicas; ++i) {
      PRIVSEARCH_ASSIGN_OR_RETURN(auto p, launch(i, "127.0.0.1:0"));
      addresses.push_back(fmt::format("127.0.0.1:{}", p->port()));
      fmt::print("replica {} pid {} on {}\n", i + 1, p->pid(), addresses.back());
      replicas.push_back(std::move(p));
    }
    BalancerSpec spec;
    spec.replicas = addresses;
    spec.check_interval_ms = 500;
    PRIVSEARCH_ASSIGN_OR_RETURN(balancer, SpawnedHaproxy::start(work / "haproxy", spec));
    fmt::print("haproxy pid {} on 127.0.0.1:{} (config {})\n", balancer->pid(), balancer->port(),
               (work / "haproxy" / "haproxy.cfg").string());
    return Status();
  }

  // Clients connect to the balancer with the replicas' pinned certificate.
  client::ConnectOptions connect_options() const {
    auto co = replicas[0]->connect_options();
    co.port = balancer->port();
    return co;
  }

  // Kills replica `i` by SIGKILL, waits a second and starts it again on its address.
  Status kill_and_restart(std::size_t i) {
    fmt::print("SIGKILL replica {} (pid {})\n", i + 1, replicas[i]->pid());
    replicas[i]->signal(SIGKILL);
    replicas[i]->stop();
    std::this_thread::sleep_for(std::chrono::seconds(1));
    PRIVSEARCH_ASSIGN_OR_RETURN(replicas[i], launch(i, addresses[i]));
    fmt::print("replica {} restarted (pid {}) on {}\n", i + 1, replicas[i]->pid(), addresses[i]);
    return Status();
  }

  // Redis and every replica stopped and started again: the budget counts before and after.
  Result<nlohmann::json> restart_all() {
    const std::string url = redis->url();
    PRIVSEARCH_ASSIGN_OR_RETURN(const std::uint64_t before, budget_total(url));
    redis->stop();
    PRIVSEARCH_ASSIGN_OR_RETURN(redis, SpawnedRedis::start(work / "redis"));
    for (std::size_t i = 0; i < replicas.size(); ++i) {
      replicas[i]->stop();
      PRIVSEARCH_ASSIGN_OR_RETURN(replicas[i], launch(i, addresses[i]));
    }
    PRIVSEARCH_ASSIGN_OR_RETURN(const std::uint64_t after, budget_total(url));
    fmt::print("requests counted in budgets: {} before, {} after the restarts ({})\n", before,
               after, before == after ? "none lost" : "COUNTS DIFFER");
    return nlohmann::json{{"before", before}, {"after", after}};
  }

  void stop() {
    balancer->stop();
    for (auto& r : replicas) r->stop();
    redis->stop();
  }
};

// One private fetch through the balancer of the first query's top document.
Result<nlohmann::json> private_fetch(const ClusterDemoOptions& o, const client::ConnectOptions& co,
                                     const std::string& query) {
  fmt::print(
      "(each replica preprocessed the same payloads itself at start; the fetch needs no setup, "
      "and any replica answers it)\n");
  PRIVSEARCH_ASSIGN_OR_RETURN(auto transport, client::ProviderClient::connect(co));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto sc, client::SearchClient::open(o.index, std::move(transport)));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto hits, sc->search(client::Query::text(query), {}));
  if (hits.hits.empty()) return internal_error("cluster demo: no hit to fetch");
  client::FetchOptions fo;
  PRIVSEARCH_ASSIGN_OR_RETURN(
      auto fetcher, client::PayloadFetcher::create(sc->transport(), sc->artifact_version(), fo));
  const auto t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto text, fetcher->fetch(hits.hits.front().doc));
  const double fetch_s = ms_since(t0) / 1000;
  fmt::print("fetched document {} privately in {:.2f} s: {}\n", hits.hits.front().doc, fetch_s,
             text.substr(0, std::min<std::size_t>(text.find('\n'), 90)));
  return nlohmann::json{{"seconds", fetch_s}, {"bytes", text.size()}};
}

void print_redis_state(const nlohmann::json& state) {
  fmt::print("state in Redis by kind (keys, bytes):");
  for (const auto& [kind, v] : state.items()) {
    fmt::print(" {} ({}, {});", kind, v["keys"].get<std::size_t>(), v["bytes"].get<std::size_t>());
  }
  fmt::print("\n");
}

}  // namespace

Result<nlohmann::json> run_cluster_demo(const ClusterDemoOptions& o) {
  if (!std::filesystem::exists(o.index / "manifest.json")) {
    return not_found_error("cluster demo: no index at `" + o.index.string() +
                           "` (run `make demo` first, or pass --index DIR)");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto queries, demo_queries(o));
  Tier tier{o, std::filesystem::absolute(o.work), {}, {}, {}, {}, {}};
  std::filesystem::remove_all(tier.work);
  std::filesystem::create_directories(tier.work);
  nlohmann::json out;
  out["machine"] = machine_description();

  step(
      fmt::format("1. Redis, {} provider replicas and HAProxy on 127.0.0.1 (throwaway certificate)",
                  o.replicas));
  PRIVSEARCH_RETURN_IF_ERROR(tier.start());
  const auto co = tier.connect_options();

  step(
      fmt::format("2. {} clients x {} text searches through the balancer; replica 2 is "
                  "SIGKILLed mid-burst and restarted",
                  o.clients, o.searches_per_client));
  const std::size_t victim = std::min<std::size_t>(1, o.replicas - 1);
  Status restart_status;
  const auto first = burst(o.index, co, queries, o.clients, o.searches_per_client,
                           [&] { restart_status = tier.kill_and_restart(victim); });
  PRIVSEARCH_RETURN_IF_ERROR(restart_status);
  out["burst"] = describe(first);
  fmt::print("searches attempted {}, failed {}; {:.1f} searches/s; search ms median {:.1f}\n",
             first.attempted, first.failed, out["burst"]["searches_per_s"].get<double>(),
             out["burst"]["search_ms"]["median"].get<double>());
  if (o.fetch) {
    step("3. a private fetch through the balancer (hintless PIR: nothing per client to share)");
    PRIVSEARCH_ASSIGN_OR_RETURN(out["fetch"], private_fetch(o, co, queries.front()));
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(out["redis_state"], state_bytes(tier.redis->url()));
  print_redis_state(out["redis_state"]);

  step("4. restart Redis and every replica: budget counts before and after");
  PRIVSEARCH_ASSIGN_OR_RETURN(out["budget_counts"], tier.restart_all());
  step("5. a short burst after the restarts");
  const auto second = burst(o.index, co, queries, std::max<std::size_t>(1, o.clients / 2), 5, {});
  out["after_restarts"] = describe(second);
  fmt::print("searches attempted {}, failed {}\n", second.attempted, second.failed);

  step("6. stop everything (by pid)");
  tier.stop();
  fmt::print("stopped; logs under {}\n", tier.work.string());
  out["searches_attempted"] = first.attempted + second.attempted;
  out["searches_failed"] = first.failed + second.failed;
  return out;
}

}  // namespace privsearch::tools
