#include "suites/bench_systems.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "ckks/param_sets.h"
#include "client/provider_client.h"
#include "client/rerank_session.h"
#include "core/elapsed.h"
#include "harness/measure.h"
#include "harness/progress.h"
#include "harness/random_vectors.h"
#include "harness/spawned_provider.h"
#include "index/artifacts/exact_store.h"
#include "index/artifacts/manifest.h"
#include "suites/bench_rerank.h"

namespace privsearch::tools {
namespace {

using Clock = std::chrono::steady_clock;
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

namespace {

// A connection and a pool of pre-encrypted requests under one key epoch.
struct RequestPool {
  std::unique_ptr<client::ProviderClient> first;
  std::vector<v1::RerankRequest> requests;
};

Result<RequestPool> measure_epoch(const SystemsBenchOptions& o, const index::Manifest& manifest,
                                  const SpawnedProvider& provider, EpochFigures& e) {
  const std::size_t n = manifest.documents, d = manifest.dim;
  PRIVSEARCH_ASSIGN_OR_RETURN(auto lit, ckks::preset_literal("rerank-n8192"));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto params, ckks::Params::create(lit));
  Prng prng = Prng::create();
  PRIVSEARCH_ASSIGN_OR_RETURN(auto session, client::RerankSession::create(params, d));
  RequestPool pool;
  PRIVSEARCH_ASSIGN_OR_RETURN(pool.first,
                              client::ProviderClient::connect(provider.connect_options()));
  // Cold: key upload + first request; warm: later requests of the epoch.
  auto t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto up, session.make_key_upload(o.k, false));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto upr, pool.first->upload_keys(up));
  if (upr.has_error()) return internal_error("key upload refused: " + upr.error().message());
  session.set_key_id(o.k, upr.key_id());
  e.cold_keygen_and_upload_ms = ms_since(t0);
  for (std::size_t p = 0; p < o.pool; ++p) {
    const auto z = random_unit_vector(d, prng);
    const auto ids = random_distinct_ids(n, o.k, prng);
    PRIVSEARCH_ASSIGN_OR_RETURN(auto pending, session.build_request({z, ids, manifest.version_id}));
    pool.requests.push_back(std::move(pending.request));
  }
  t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto r0, pool.first->rerank(pool.requests[0]));
  e.cold_first_request_ms = ms_since(t0);
  if (r0.has_error()) return internal_error("rerank refused: " + r0.error().message());
  e.request_bytes = pool.requests[0].ByteSizeLong();
  e.response_bytes = r0.ByteSizeLong();
  e.key_upload_bytes = up.ByteSizeLong();
  for (std::size_t i = 0; i < 20; ++i) {
    t0 = Clock::now();
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto r, pool.first->rerank(pool.requests[i % o.pool]));
    e.warm_request_ms.push_back(ms_since(t0));
    if (r.has_error()) return internal_error("rerank refused: " + r.error().message());
  }
  return pool;
}

// Closed loop: `clients` connections send the pool's requests back to back.
Result<SaturationLevel> saturate(const SystemsBenchOptions& o, const SpawnedProvider& provider,
                                 const std::vector<v1::RerankRequest>& pool, std::size_t clients) {
  std::vector<std::unique_ptr<client::ProviderClient>> conns;
  for (std::size_t c = 0; c < clients; ++c) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto conn,
                                client::ProviderClient::connect(provider.connect_options()));
    conns.push_back(std::move(conn));
  }
  std::atomic<std::size_t> next{0}, failures{0};
  std::vector<std::vector<double>> lat(clients);
  const double cpu0 = cpu_seconds(provider.pid());
  const auto t0 = Clock::now();
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
  SaturationLevel level;
  level.clients = clients;
  level.requests = o.requests_per_level;
  level.requests_per_s = static_cast<double>(o.requests_per_level) / wall;
  level.provider_cpu_cores_busy = (cpu_seconds(provider.pid()) - cpu0) / wall;
  level.failures = failures.load();
  for (auto& v : lat) level.latency_ms.insert(level.latency_ms.end(), v.begin(), v.end());
  return level;
}

// The median of 50 runs of `fn` (which returns the bytes it produced) and those bytes.
template <typename Fn>
VectorReturn time_encoding(Fn&& fn) {
  std::vector<double> t;
  std::size_t bytes = 0;
  for (int r = 0; r < 50; ++r) {
    const auto s = Clock::now();
    bytes = fn();
    t.push_back(ms_since(s));
  }
  return {bytes, eval::describe(std::move(t)).median};
}

// IEEE half by truncation of the float's exponent and mantissa (values are small).
std::uint16_t to_half(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  const std::uint32_t sign = (u >> 16) & 0x8000, exp = (u >> 23) & 0xff, man = u & 0x7fffff;
  const int e = static_cast<int>(exp) - 127 + 15;
  return static_cast<std::uint16_t>(
      e <= 0    ? sign
      : e >= 31 ? (sign | 0x7c00)
                : (sign | (static_cast<std::uint32_t>(e) << 10) | (man >> 13)));
}

// Vector-return baselines: the K candidate rows of one request sent back in the clear.
void vector_return_baselines(const index::ExactStore& store, const v1::RerankRequest& request,
                             SystemsBenchResult& out) {
  const std::size_t d = store.cols();
  std::vector<std::uint64_t> ids(request.candidate_ids().begin(), request.candidate_ids().end());
  out.float32 = time_encoding([&] {
    std::vector<float> buf;
    for (auto id : ids) buf.insert(buf.end(), store.row(id), store.row(id) + d);
    return buf.size() * 4;
  });
  out.float16 = time_encoding([&] {
    std::vector<std::uint16_t> buf;
    for (auto id : ids) {
      for (std::size_t j = 0; j < d; ++j) buf.push_back(to_half(store.row(id)[j]));
    }
    return buf.size() * 2;
  });
  out.int8_row_scale = time_encoding([&] {
    std::vector<std::int8_t> buf;
    std::vector<float> scales;
    for (auto id : ids) {
      float mx = 0;
      for (std::size_t j = 0; j < d; ++j) mx = std::max(mx, std::abs(store.row(id)[j]));
      const float sc = mx > 0 ? mx / 127.0f : 1.0f;
      scales.push_back(sc);
      for (std::size_t j = 0; j < d; ++j) {
        buf.push_back(static_cast<std::int8_t>(std::lround(store.row(id)[j] / sc)));
      }
    }
    return buf.size() + scales.size() * 4;
  });
}

// Kernel scaling (one thread, in process): the fast kernel over K at d' = 672 and over d' at
// K = 100.
Result<nlohmann::json> kernel_scaling() {
  nlohmann::json scaling = nlohmann::json::array();
  for (const auto& [dims, ks] :
       {std::pair<std::vector<std::size_t>, std::vector<std::size_t>>{{672}, {20, 50, 100, 200}},
        {{192, 384, 768}, {100}}}) {
    RerankBenchOptions ro;
    ro.kernels = {"fast"};
    ro.dims = dims;
    ro.ks = ks;
    ro.runs = 10;
    ro.order_queries = 1;
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto r, run_rerank_bench(ro));
    for (const auto& row : r.results) {
      const auto j = row.to_json();
      scaling.push_back({{"dim", row.dim},
                         {"k", row.k},
                         {"server_ms", j["server_ms"]},
                         {"response_bytes", row.response_bytes}});
    }
  }
  return scaling;
}

}  // namespace

Result<SystemsBenchResult> run_systems_bench(const SystemsBenchOptions& o) {
  if (!std::filesystem::exists(o.index / "manifest.json")) {
    return not_found_error("bench systems: no index at `" + o.index.string() +
                           "` (run `make demo` first or pass --index DIR)");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto v,
                              version::IndexVersion::open(o.index, version::tool_spec()));
  const auto& manifest = v.manifest();
  SystemsBenchResult out;
  out.machine = machine_description();
  out.index = o.index.string();
  out.docs = manifest.documents;
  out.dim = manifest.dim;
  out.k = o.k;
  out.input_dim = manifest.input_dim;
  if (o.k == 0 || o.k > out.docs) return invalid_argument_error("bench systems: K outside [1, N]");
  const Progress progress("bench systems: ");
  progress(fmt::format("provider on {} ({} docs, d' = {})", out.index, out.docs, out.dim));
  PRIVSEARCH_ASSIGN_OR_RETURN(
      const auto provider,
      SpawnedProvider::start(
          {o.index,
           o.index.parent_path() / "bench-systems",
           {"--no-pir", "--scores-per-key", "1000000000", "--max-concurrent", "256",
            "--key-uploads-per-minute", "0", "--max-concurrent-per-client", "0"}}));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto pool, measure_epoch(o, manifest, *provider, out.epochs));
  for (const std::size_t clients : o.clients) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto level, saturate(o, *provider, pool.requests, clients));
    progress(fmt::format("{} clients: {:.1f} req/s", clients, level.requests_per_s));
    out.saturation.push_back(std::move(level));
  }
  out.provider_peak_rss_bytes = peak_rss_bytes(provider->pid());
  PRIVSEARCH_ASSIGN_OR_RETURN(
      const auto store, index::ExactStore::open(o.index / manifest.find("exact_store")->file));
  vector_return_baselines(store, pool.requests[0], out);
  progress("kernel scaling in K and d'");
  PRIVSEARCH_ASSIGN_OR_RETURN(out.kernel_scaling, kernel_scaling());
  return out;
}

nlohmann::json SystemsBenchResult::to_json() const {
  nlohmann::json out;
  out["suite"] = "systems";
  out["machine"] = machine;
  out["index"] = index;
  out["docs"] = docs;
  out["dim"] = dim;
  out["k"] = k;
  out["transport"] = "gRPC over TLS 1.3, 127.0.0.1, provider in its own process";
  const auto& e = epochs;
  nlohmann::json amort;
  for (const std::size_t m : {1u, 10u, 100u}) {
    amort[std::to_string(m)] =
        static_cast<double>(e.key_upload_bytes + m * (e.request_bytes + e.response_bytes)) /
        static_cast<double>(m);
  }
  out["epochs"] = {{"cold_keygen_and_upload_ms", e.cold_keygen_and_upload_ms},
                   {"cold_first_request_ms", e.cold_first_request_ms},
                   {"warm_request_ms", latency_summary(e.warm_request_ms, "p50")},
                   {"key_upload_bytes", e.key_upload_bytes},
                   {"request_bytes", e.request_bytes},
                   {"response_bytes", e.response_bytes},
                   {"bytes_per_request_amortized", amort}};
  nlohmann::json sat = nlohmann::json::array();
  for (const auto& l : saturation) {
    sat.push_back({{"clients", l.clients},
                   {"requests", l.requests},
                   {"requests_per_s", l.requests_per_s},
                   {"latency_ms", latency_summary(l.latency_ms, "p50")},
                   {"provider_cpu_cores_busy", l.provider_cpu_cores_busy},
                   {"failures", l.failures}});
  }
  out["saturation"] = sat;
  out["provider_peak_rss_bytes"] = provider_peak_rss_bytes;
  out["kernel_scaling"] = kernel_scaling;
  auto encoded = [](const VectorReturn& v) {
    return nlohmann::json{{"bytes", v.bytes}, {"ms", v.ms}};
  };
  out["vector_return_baselines"] = {
      {"note",
       "what the provider would send if it returned the K candidate rows in the clear "
       "(and revealed them): bytes, and the median time to gather and encode them"},
      {"projected_float32", encoded(float32)},
      {"projected_float16", encoded(float16)},
      {"projected_int8_row_scale", encoded(int8_row_scale)},
      {"raw_float32_bytes", k * input_dim * 4},
      {"encrypted_response_bytes", e.response_bytes}};
  return out;
}

}  // namespace privsearch::tools
