#include "suites/bench_systems.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "suites/bench_rerank.h"
#include "harness/measure.h"
#include "client/rerank_session.h"
#include "ckks/param_sets.h"
#include "ckks/serialization.h"
#include "client/provider_client.h"
#include "index/exact_store.h"
#include "index/manifest.h"
#include "harness/spawned_provider.h"
#include "rerank/client/scores.h"
#include "rerank/messages.h"
#include "harness/random_vectors.h"

namespace privsearch::tools {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}
// utime + stime of a process in seconds (/proc/<pid>/stat fields 14 and 15).
double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(in, line);
  const auto close = line.rfind(')');
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  double ut = 0, st = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) ut = std::stod(field);
    if (i == 15) st = std::stod(field);
  }
  return (ut + st) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}
std::size_t peak_rss_bytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

}  // namespace

Result<nlohmann::json> run_systems_bench(const SystemsBenchOptions& o) {
  if (!std::filesystem::exists(o.index / "manifest.json")) {
    return not_found_error("bench systems: no index at `" + o.index.string() +
                           "` (run `make demo` first or pass --index DIR)");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto manifest, index::load_manifest(o.index, false));
  const std::size_t n = manifest.documents, d = manifest.dim;
  if (o.k == 0 || o.k > n) return invalid_argument_error("bench systems: K outside [1, N]");
  fmt::print(stderr, "bench systems: provider on {} ({} docs, d' = {})\n", o.index.string(), n, d);
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto provider, SpawnedProvider::start({o.index, o.index.parent_path() / "bench-systems", {"--no-pir", "--requests-per-key", "1000000000", "--max-concurrent", "256"}}));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto lit, ckks::preset_literal("rerank-n8192"));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto params, ckks::Params::create(lit));
  Prng prng = Prng::create();
  PRIVSEARCH_ASSIGN_OR_RETURN(auto session, client::RerankSession::create(params, d));
  client::ConnectOptions co;
  co.port = provider->port();
  co.pinned_fingerprint = provider->fingerprint();
  PRIVSEARCH_ASSIGN_OR_RETURN(auto first, client::ProviderClient::connect(co));

  // Cold: key upload + first request; warm: later requests of the epoch.
  auto t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto up, session.make_key_upload(o.k, false));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto upr, first->upload_keys(up));
  if (upr.has_error()) return internal_error("key upload refused: " + upr.error().message());
  session.set_key_id(o.k, upr.key_id());
  const double keygen_upload_ms = ms_since(t0);
  std::vector<v1::RerankRequest> pool;
  for (std::size_t p = 0; p < o.pool; ++p) {
    const auto z = random_unit_vector(d, prng);
    std::vector<std::uint64_t> ids;
    while (ids.size() < o.k) {
      const auto id = prng.uniform_below(n);
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    }
    PRIVSEARCH_ASSIGN_OR_RETURN(auto pending,
                                session.build_request({z, ids, manifest.version_id}));
    pool.push_back(std::move(pending.request));
  }
  t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto r0, first->rerank(pool[0]));
  const double first_ms = ms_since(t0);
  if (r0.has_error()) return internal_error("rerank refused: " + r0.error().message());
  const std::size_t req_bytes = pool[0].ByteSizeLong(), resp_bytes = r0.ByteSizeLong(),
                    key_bytes = up.ByteSizeLong();
  std::vector<double> warm;
  for (int i = 0; i < 20; ++i) {
    t0 = Clock::now();
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto r, first->rerank(pool[static_cast<std::size_t>(i) % pool.size()]));
    warm.push_back(ms_since(t0));
    if (r.has_error()) return internal_error("rerank refused: " + r.error().message());
  }
  nlohmann::json out;
  out["suite"] = "systems";
  out["machine"] = machine_description();
  out["index"] = o.index.string();
  out["docs"] = n;
  out["dim"] = d;
  out["k"] = o.k;
  out["transport"] = "gRPC over TLS 1.3, 127.0.0.1, provider in its own process";
  nlohmann::json amort;
  for (std::size_t m : {1u, 10u, 100u}) {
    amort[std::to_string(m)] = static_cast<double>(key_bytes + m * (req_bytes + resp_bytes)) / static_cast<double>(m);
  }
  out["epochs"] = {{"cold_keygen_and_upload_ms", keygen_upload_ms},
                   {"cold_first_request_ms", first_ms},
                   {"warm_request_ms", latency_summary(warm, "p50")},
                   {"key_upload_bytes", key_bytes},
                   {"request_bytes", req_bytes},
                   {"response_bytes", resp_bytes},
                   {"bytes_per_request_amortized", amort}};

  // Closed-loop saturation.
  nlohmann::json sat = nlohmann::json::array();
  for (std::size_t clients : o.clients) {
    std::vector<std::unique_ptr<client::ProviderClient>> conns;
    for (std::size_t c = 0; c < clients; ++c) {
      PRIVSEARCH_ASSIGN_OR_RETURN(auto conn, client::ProviderClient::connect(co));
      conns.push_back(std::move(conn));
    }
    std::atomic<std::size_t> next{0}, failures{0};
    std::vector<std::vector<double>> lat(clients);
    const double cpu0 = cpu_seconds(provider->pid());
    t0 = Clock::now();
    std::vector<std::thread> th;
    for (std::size_t c = 0; c < clients; ++c) {
      th.emplace_back([&, c] {
        for (;;) {
          const std::size_t i = next++;
          if (i >= o.requests_per_level) return;
          const auto s = Clock::now();
          auto r = conns[c]->rerank(pool[i % pool.size()]);
          lat[c].push_back(ms_since(s));
          if (!r.ok() || r->has_error()) ++failures;
        }
      });
    }
    for (auto& t : th) t.join();
    const double wall = ms_since(t0) / 1000;
    const double cpu = cpu_seconds(provider->pid()) - cpu0;
    std::vector<double> all;
    for (auto& v : lat) all.insert(all.end(), v.begin(), v.end());
    nlohmann::json level = {{"clients", clients},
                            {"requests", o.requests_per_level},
                            {"requests_per_s", static_cast<double>(o.requests_per_level) / wall},
                            {"latency_ms", latency_summary(all, "p50")},
                            {"provider_cpu_cores_busy", cpu / wall},
                            {"failures", failures.load()}};
    sat.push_back(level);
    fmt::print(stderr, "bench systems: {} clients: {:.1f} req/s\n", clients,
               static_cast<double>(o.requests_per_level) / wall);
  }
  out["saturation"] = sat;
  out["provider_peak_rss_bytes"] = peak_rss_bytes(provider->pid());

  // Vector-return baselines: the K candidate rows sent back in the clear.
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto store, index::ExactStore::open(o.index / manifest.find("exact_store")->file));
  std::vector<std::uint32_t> ids;
  for (int i = 0; i < pool[0].candidate_ids_size(); ++i) ids.push_back(static_cast<std::uint32_t>(pool[0].candidate_ids(i)));
  auto time_it = [&](auto&& fn) {
    std::vector<double> t;
    std::size_t bytes = 0;
    for (int r = 0; r < 50; ++r) {
      const auto s = Clock::now();
      bytes = fn();
      t.push_back(ms_since(s));
    }
    std::sort(t.begin(), t.end());
    return std::pair<double, std::size_t>{t[t.size() / 2], bytes};
  };
  auto f32 = time_it([&] {
    std::vector<float> buf;
    for (auto id : ids) buf.insert(buf.end(), store.row(id), store.row(id) + d);
    return buf.size() * 4;
  });
  auto f16 = time_it([&] {
    std::vector<std::uint16_t> buf;
    for (auto id : ids) {
      for (std::size_t j = 0; j < d; ++j) {
        // IEEE half by truncation of the float's exponent and mantissa (values are small).
        std::uint32_t u;
        std::memcpy(&u, store.row(id) + j, 4);
        const std::uint32_t sign = (u >> 16) & 0x8000, exp = (u >> 23) & 0xff, man = u & 0x7fffff;
        const int e = static_cast<int>(exp) - 127 + 15;
        buf.push_back(static_cast<std::uint16_t>(e <= 0 ? sign : e >= 31 ? (sign | 0x7c00) : (sign | (static_cast<std::uint32_t>(e) << 10) | (man >> 13))));
      }
    }
    return buf.size() * 2;
  });
  auto i8 = time_it([&] {
    std::vector<std::int8_t> buf;
    std::vector<float> scales;
    for (auto id : ids) {
      float mx = 0;
      for (std::size_t j = 0; j < d; ++j) mx = std::max(mx, std::abs(store.row(id)[j]));
      const float sc = mx > 0 ? mx / 127.0f : 1.0f;
      scales.push_back(sc);
      for (std::size_t j = 0; j < d; ++j) buf.push_back(static_cast<std::int8_t>(std::lround(store.row(id)[j] / sc)));
    }
    return buf.size() + scales.size() * 4;
  });
  // Kernel scaling (one thread, in process): the fast kernel over K at d' = 672 and over d' at
  // K = 100.
  {
    fmt::print(stderr, "bench systems: kernel scaling in K and d'\n");
    nlohmann::json scaling = nlohmann::json::array();
    auto run = [&](std::vector<std::size_t> dims, std::vector<std::size_t> ks) -> Status {
      RerankBenchOptions ro;
      ro.kernels = {"fast"};
      ro.dims = std::move(dims);
      ro.ks = std::move(ks);
      ro.runs = 10;
      ro.order_queries = 1;
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto r, run_rerank_bench(ro));
      for (const auto& row : r["results"]) {
        scaling.push_back({{"dim", row.value("dim", 0)}, {"k", row.value("k", 0)},
                           {"server_ms", row.value("server_ms", nlohmann::json())},
                           {"response_bytes", row.value("response_bytes", 0)}});
      }
      return Status();
    };
    PRIVSEARCH_RETURN_IF_ERROR(run({672}, {20, 50, 100, 200}));
    PRIVSEARCH_RETURN_IF_ERROR(run({192, 384, 768}, {100}));
    out["kernel_scaling"] = scaling;
  }
  out["vector_return_baselines"] = {
      {"note", "what the provider would send if it returned the K candidate rows in the clear "
               "(and revealed them): bytes, and the median time to gather and encode them"},
      {"projected_float32", {{"bytes", f32.second}, {"ms", f32.first}}},
      {"projected_float16", {{"bytes", f16.second}, {"ms", f16.first}}},
      {"projected_int8_row_scale", {{"bytes", i8.second}, {"ms", i8.first}}},
      {"raw_float32_bytes", o.k * manifest.input_dim * 4},
      {"encrypted_response_bytes", resp_bytes}};
  return out;
}

}  // namespace privsearch::tools
