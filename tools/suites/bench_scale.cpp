#include "suites/bench_scale.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <thread>

#include "client/provider_client.h"
#include "client/search_client.h"
#include "core/elapsed.h"
#include "eval/statistics.h"
#include "experiments/eval_self_retrieval.h"
#include "experiments/offline_index.h"
#include "harness/measure.h"
#include "harness/progress.h"
#include "harness/spawned_provider.h"
#include "harness/synthetic_index.h"
#include "index/artifacts/append.h"
#include "index/artifacts/artifacts.h"
#include "index/artifacts/atomic_file.h"
#include "index/artifacts/client_files.h"
#include "index/build_streaming.h"
#include "index/candidates/ivf.h"
#include "index/candidates/ivf_list_record.h"
#include "index/candidates/pq_scan.h"
#include "suites/list_cache_model.h"

namespace privsearch::tools {

using client::Stage;
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Rows of the synthetic model, generated on every core (each row from its own seeded stream, so
// the split does not change them).
void synthetic_rows(const Synthetic& gen, std::size_t first, std::size_t count, float* out,
                    std::size_t dim) {
  const std::size_t threads =
      count >= 256 ? std::max<std::size_t>(1, std::thread::hardware_concurrency()) : 1;
  std::vector<std::thread> workers;
  for (std::size_t t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (std::size_t i = t; i < count; i += threads) {
        const auto v = gen.vector(first + i);
        std::copy(v.begin(), v.end(), out + i * dim);
      }
    });
  }
  for (auto& w : workers) w.join();
}

fs::path scale_dir(const ScaleBenchOptions& o) {
  const auto lists =
      o.lists != 0 ? std::to_string(o.lists) : fmt::format("N{}", index::kIvfDocumentsPerList);
  return o.cache / fmt::format("synthetic-{}-{}-{}-m{}-l{}-r{}-s{}-{}", o.docs, o.input_dim, o.dim,
                               o.pq_m, lists, o.route_dim, o.spill,
                               o.store_dtype == index::StoreDtype::kFloat16 ? "f16" : "f32");
}

double peak_rss_mb() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// The index, built once (resumable); the build's figures are kept beside it.
Result<nlohmann::json> ensure_index(const ScaleBenchOptions& o, const fs::path& dir,
                                    const Synthetic& gen, const Progress& progress) {
  const auto stats_file = dir.parent_path() / "build_stats.json";
  if (fs::exists(dir / "manifest.json") && fs::exists(stats_file)) {
    progress("reusing " + dir.string());
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, index::read_file_bytes(stats_file));
    return nlohmann::json::parse(bytes.begin(), bytes.end());
  }
  index::StreamingBuildOptions b;
  b.source.rows = o.docs;
  b.source.cols = o.input_dim;
  b.source.vectors = [&](std::size_t first, std::size_t count, float* out) {
    synthetic_rows(gen, first, count, out, o.input_dim);
  };
  b.source.document = [](std::size_t i) {
    return index::Document{fmt::format("d{}", i), fmt::format("document {}", i), ""};
  };
  b.out = dir;
  b.collection = "synthetic";
  b.encoder_id = "synthetic-32-latent";
  b.dim = o.dim;
  b.pq_m = o.pq_m;
  b.record_bytes = 64;
  b.ivf_lists = o.lists;
  b.ivf_route_dim = o.route_dim;
  b.ivf_spill = o.spill;
  b.store_dtype = o.store_dtype;
  const bool resumed = fs::exists(dir / ".build" / "progress.json");
  progress(fmt::format("{} the streaming build of {} synthetic documents in {}",
                       resumed ? "resuming" : "starting", o.docs, dir.string()));
  const auto t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto man, index::build_index_streaming(b, progress.callback()));
  nlohmann::json stats;
  stats["build_s"] = ms_since(t0) / 1000;
  stats["resumed"] = resumed;  // build_s then covers only the last run
  stats["peak_rss_mb"] = peak_rss_mb();
  for (const auto& a : man.artifacts) stats["artifact_bytes"][a.name] = a.bytes;
  const auto text = stats.dump(2);
  PRIVSEARCH_RETURN_IF_ERROR(index::write_bytes_atomically(
      stats_file, {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()}));
  return stats;
}

// Route, read and decode the probed lists (untimed: the client's cache or fetch does that), then
// time the route + scan the client runs.
struct IvfProbe {
  std::vector<std::uint32_t> lists, candidates;
  std::uint64_t bytes = 0;
  double scan_ms = 0;
};

Result<IvfProbe> probe_lists(const index::IvfIndex& ivf, const index::IvfListStore& store,
                             std::span<const float> z, std::size_t nprobe, std::size_t k) {
  IvfProbe p;
  p.lists = index::route_query(ivf, z, nprobe);
  std::vector<index::IvfList> decoded;
  for (const auto l : p.lists) {
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto seg, store.segment(l));
    PRIVSEARCH_ASSIGN_OR_RETURN(
        auto list, index::decode_list(
                       ivf, l, {reinterpret_cast<const std::uint8_t*>(seg.data()), seg.size()}));
    decoded.push_back(std::move(list));
    p.bytes += ivf.directory[l].bytes;
  }
  std::vector<const index::IvfList*> views;
  for (const auto& l : decoded) views.push_back(&l);
  const auto t0 = Clock::now();
  const auto routed = index::route_query(ivf, z, nprobe);
  PRIVSEARCH_ASSIGN_OR_RETURN(p.candidates, index::ivf_search(ivf, views, z, k));
  p.scan_ms = ms_since(t0);
  if (routed != p.lists) return internal_error("routing is not deterministic");
  return p;
}

// Client bytes, scan times and Hit@10 of IVF (per nprobe) against flat candidates, offline.
// The lists as PIR records (--pir-lists; index/candidates/ivf_list_record.h): one per list, padded
// to the longest. Its cost per list fetched is `bench pir` at this shape (docs/SCALE.md).
nlohmann::json private_lists_shape(const index::IvfIndex& ivf) {
  const std::uint64_t record = index::list_record_bytes(ivf);
  const double mean = static_cast<double>(ivf.lists_file_bytes) / static_cast<double>(ivf.lists);
  return {{"records", ivf.lists},
          {"record_bytes", record},
          {"table_bytes", record * ivf.lists},
          {"padding_over_mean", static_cast<double>(record) / mean},
          {"measure_with",
           fmt::format("privsearch bench pir --db-mb {} --record-bytes {}",
                       std::max<std::uint64_t>(1, (record * ivf.lists) >> 20), record)}};
}

Result<nlohmann::json> offline_part(const ScaleBenchOptions& o, const fs::path& dir,
                                    const index::ExactStore& store, const SelfQueries& queries,
                                    const Progress& progress) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto ivf, index::load_ivf(dir / index::kIvfFile));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto lists,
                              index::IvfListStore::open(dir / index::kIvfListsFile, ivf));
  const std::size_t d = store.cols();
  const std::size_t nq = queries.sources.size();
  auto z_of = [&](std::size_t qi) {
    return std::span<const float>(queries.projected_flat.data() + qi * d, d);
  };
  const std::uint64_t shared =
      file_bytes(dir / "manifest.json") + file_bytes(dir / "projection.bin");
  nlohmann::json out;
  out["lists"] = ivf.lists;
  out["route_dim"] = ivf.route_dim;
  out["spill"] = ivf.spill;
  out["queries"] = nq;
  out["warm_cache_mb"] = o.warm_cache_mb;
  out["flat_client_bytes"] = shared + file_bytes(dir / "pq.bin");
  out["ivf_directory_bytes"] = file_bytes(dir / index::kIvfFile);
  out["private_lists"] = private_lists_shape(ivf);
  {
    progress("the flat scan over every PQ code (loading pq.bin)");
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto pq, index::load_pq(dir / "pq.bin"));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto scanner, index::PqScanner::create(pq));
    std::vector<double> flat_ms;
    std::size_t hit_flat = 0;
    for (std::size_t qi = 0; qi < nq; ++qi) {
      const auto t0 = Clock::now();
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto flat, scanner.search(z_of(qi), o.k));
      flat_ms.push_back(ms_since(t0));
      hit_flat += in_top10(exact_rerank(store, z_of(qi), flat), queries.sources[qi]);
    }
    out["flat_scan_ms"] = latency_summary(flat_ms);
    out["hit10_flat"] = static_cast<double>(hit_flat) / static_cast<double>(nq);
  }
  for (const auto nprobe : o.nprobe) {
    std::vector<double> scan_ms, warm_bytes, probed_bytes;
    std::size_t hit_ivf = 0;
    ListCacheModel cache(o.warm_cache_mb << 20);
    nlohmann::json row;
    for (std::size_t qi = 0; qi < nq; ++qi) {
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto p, probe_lists(ivf, lists, z_of(qi), nprobe, o.k));
      scan_ms.push_back(p.scan_ms);
      hit_ivf += in_top10(exact_rerank(store, z_of(qi), p.candidates), queries.sources[qi]);
      probed_bytes.push_back(static_cast<double>(p.bytes));
      const auto fetched = cache.fetch(ivf, p.lists);
      if (qi >= nq / 2) warm_bytes.push_back(static_cast<double>(fetched));
      if (qi == 0) {
        row["client_bytes_first_search"] =
            shared + out["ivf_directory_bytes"].get<std::uint64_t>() + p.bytes;
      }
    }
    row["nprobe"] = nprobe;
    row["hit10_ivf"] = static_cast<double>(hit_ivf) / static_cast<double>(nq);
    row["hit10_vs_flat"] = row["hit10_ivf"].get<double>() - out["hit10_flat"].get<double>();
    row["scan_ms"] = latency_summary(scan_ms);
    row["probed_bytes"] = latency_summary(probed_bytes);
    row["client_bytes_per_search_warm"] = eval::describe(warm_bytes).mean;
    progress(fmt::format("nprobe {}: Hit@10 {:.3f} (flat {:.3f})", nprobe,
                         row["hit10_ivf"].get<double>(), out["hit10_flat"].get<double>()));
    out["by_nprobe"].push_back(row);
  }
  // The first nprobe's figures at the top level (the one the online part uses).
  for (const auto* key : {"client_bytes_first_search", "client_bytes_per_search_warm", "scan_ms",
                          "hit10_ivf", "nprobe"}) {
    out[key] = out["by_nprobe"][0][key];
  }
  return out;
}

// A copy of the index directory whose files are hard links to the built one's: an update
// writes new files and replaces the manifest by rename, so the built index is never changed.
Status link_copy(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::remove_all(to, ec);
  fs::create_directories(to, ec);
  if (ec)
    return unavailable_error(fmt::format("cannot create `{}`: {}", to.string(), ec.message()));
  for (const auto& e : fs::directory_iterator(from)) {
    if (!e.is_regular_file()) continue;
    fs::create_hard_link(e.path(), to / e.path().filename(), ec);
    if (ec)
      return unavailable_error(
          fmt::format("cannot link `{}`: {}", e.path().string(), ec.message()));
  }
  return Status();
}

// A 1% (update_fraction) append of new synthetic documents and deletions of a tenth as many,
// applied to the served copy: what the update writes, what a client downloads (flat and IVF)
// next to the flat artifact, how long the provider takes to serve it after SIGHUP and a client
// to copy and open it, and whether appended documents are found by their own vectors.
Result<nlohmann::json> update_part(const ScaleBenchOptions& o, const Synthetic& gen,
                                   const fs::path& served, const fs::path& thin,
                                   SpawnedProvider& provider, client::OpenOptions oo,
                                   const Progress& progress) {
  nlohmann::json out;
  const auto appended = std::max<std::size_t>(
      1, static_cast<std::size_t>(static_cast<double>(o.docs) * o.update_fraction));
  index::AppendInput in;
  in.vectors = index::Matrix{appended, o.input_dim, std::vector<float>(appended * o.input_dim)};
  synthetic_rows(gen, o.docs, appended, in.vectors.data.data(), o.input_dim);
  for (std::size_t i = 0; i < appended; ++i) {
    in.documents.push_back(
        {fmt::format("d{}", o.docs + i), fmt::format("document {}", o.docs + i), ""});
  }
  Prng pick = Prng::from_seed(Seed{}, /*stream=*/0xde1e7e);  // the same deletions every run
  for (std::size_t i = 0; i < std::max<std::size_t>(1, appended / 10); ++i) {
    in.deleted.push_back(pick.uniform_below(o.docs));
  }
  progress(fmt::format("update: appending {} documents, deleting {}", appended, in.deleted.size()));
  auto t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto result, index::append_to_index(served, in, nullptr));
  out["appended"] = appended;
  out["deleted"] = result.deleted;
  out["update_write_s"] = ms_since(t0) / 1000;
  const auto* flat = result.manifest.find("pq");
  const double flat_bytes = flat != nullptr ? static_cast<double>(flat->bytes) : 0.0;
  out["update_bytes"] = {
      {"flat_client", result.flat_client_bytes},
      {"ivf_client", result.ivf_client_bytes},
      {"flat_artifact", flat_bytes},
      {"flat_client_fraction_of_flat", static_cast<double>(result.flat_client_bytes) / flat_bytes},
      {"ivf_client_fraction_of_flat", static_cast<double>(result.ivf_client_bytes) / flat_bytes}};

  progress("update: SIGHUP; waiting until the provider serves the new version");
  t0 = Clock::now();
  if (!provider.signal(SIGHUP)) return unavailable_error("cannot signal the provider");
  PRIVSEARCH_ASSIGN_OR_RETURN(auto watch,
                              client::ProviderClient::connect(provider.connect_options()));
  const auto until = Clock::now() + std::chrono::seconds(3600);
  for (;;) {
    auto info = watch->server_info();
    if (info.ok() && info->artifact_version() == result.manifest.version_id) break;
    if (Clock::now() > until)
      return unavailable_error("the provider did not serve the update in an hour");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const double provider_s = ms_since(t0) / 1000;

  progress("update: the client copies the new files and reopens");
  t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(
      const auto copied,
      index::copy_client_files(served, thin, {"projection", index::kIvfArtifact}));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto transport,
                              client::ProviderClient::connect(provider.connect_options()));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto sc, client::SearchClient::open(thin, std::move(transport), oo));
  out["update_apply_s"] = {{"provider", provider_s}, {"client", ms_since(t0) / 1000}};
  out["client_bytes_copied"] = copied;

  // Appended documents found by their own vectors (top 10), with the default nprobe.
  client::SearchOptions so;
  so.candidates = o.k;
  so.nprobe = o.nprobe.front();
  const std::size_t probes = std::min<std::size_t>(20, appended);
  std::size_t found = 0;
  std::vector<double> total;
  for (std::size_t i = 0; i < probes; ++i) {
    const std::size_t row = i * appended / probes;
    PRIVSEARCH_ASSIGN_OR_RETURN(
        const auto r,
        sc->search(client::Query::vector(std::span(in.vectors.row(row), o.input_dim)), so));
    total.push_back(r.timing.total_ms);
    for (std::size_t h = 0; h < std::min<std::size_t>(10, r.hits.size()); ++h) {
      if (r.hits[h].doc == o.docs + row) ++found;
    }
  }
  out["appended_found_at_10"] = static_cast<double>(found) / static_cast<double>(probes);
  out["online_ms_after_update"] = latency_summary(total);
  return out;
}

// Timed searches (after 5 warm-up ones) of a thin IVF client: the end-to-end latency and where
// it goes (medians, p95, p99).
nlohmann::json timed_searches(client::SearchClient& sc, const SelfQueries& queries,
                              std::size_t nprobe, const ScaleBenchOptions& o,
                              const Progress& progress) {
  client::SearchOptions so;
  so.candidates = o.k;
  so.nprobe = nprobe;
  std::vector<double> total, scan, fetch, check, provider_ms, rpc, list_bytes, encrypt;
  std::size_t failures = 0;
  const std::size_t warmup = 5;
  for (std::size_t i = 0; i < warmup + o.online_queries; ++i) {
    auto r = sc.search(client::Query::vector(queries.raw[i % queries.raw.size()]), so);
    if (!r.ok()) {
      ++failures;
      progress("search failed: " + r.status().to_string());
      continue;
    }
    if (i < warmup) continue;
    const auto& t = r->timing;
    total.push_back(t.total_ms);
    scan.push_back(t[Stage::kCandidates].ms);
    fetch.push_back(t[Stage::kListFetch].ms);
    check.push_back(t[Stage::kListCheck].ms);
    provider_ms.push_back(t.provider_ms);
    rpc.push_back(t[Stage::kRpc].ms);
    encrypt.push_back(t[Stage::kEncrypt].ms);
    list_bytes.push_back(static_cast<double>(t[Stage::kListFetch].bytes_received));
  }
  nlohmann::json out;
  out["nprobe"] = nprobe;
  out["searches"] = total.size();
  out["failures"] = failures;
  out["online_ms"] = latency_summary(total);
  out["client_scan_ms"] = latency_summary(scan);  // route + scan of every segment
  out["list_fetch_ms"] = latency_summary(fetch);  // waiting on the provider
  out["list_check_ms"] = latency_summary(check);  // SHA-256 check and decode on arrival
  out["rpc_ms"] = latency_summary(rpc);
  out["encrypt_ms_overlapped"] = latency_summary(encrypt);  // during the list fetch and scan
  out["provider_ms"] = latency_summary(provider_ms);
  out["list_bytes_per_search"] = list_bytes.empty() ? 0.0 : eval::describe(list_bytes).mean;
  return out;
}

// End to end: a thin IVF client (no pq.bin) against a provider process over TLS on loopback,
// serving a linked copy of the index (the update, when asked for, changes the copy only).
Result<nlohmann::json> online_part(const ScaleBenchOptions& o, const fs::path& built,
                                   const SelfQueries& queries, const Synthetic& gen,
                                   const Progress& progress) {
  const auto work = built.parent_path() / "online";
  const auto thin = work / "client";
  const auto dir = work / "index";
  fs::remove_all(work);
  fs::create_directories(work);
  PRIVSEARCH_RETURN_IF_ERROR(link_copy(built, dir));
  PRIVSEARCH_RETURN_IF_ERROR(
      index::copy_client_files(dir, thin, {"projection", index::kIvfArtifact}).status());
  progress("starting a provider process on the index (it verifies every row of the store)");
  const auto t0 = Clock::now();
  ProviderLaunch launch(dir, work);
  launch.start_timeout = std::chrono::seconds(1800);
  launch.log_file = work / "provider.log";
  PRIVSEARCH_ASSIGN_OR_RETURN(auto provider, SpawnedProvider::start(launch));
  nlohmann::json out;
  out["provider_start_s"] = ms_since(t0) / 1000;
  client::OpenOptions oo;
  oo.candidates = client::CandidateIndex::kIvf;
  oo.disk_cache =
      false;  // a fresh client; its memory cache (--warm-cache-mb) warms over the searches
  oo.list_memory_bytes = std::uint64_t{o.warm_cache_mb} << 20;
  // Every --scale-nprobe against the one provider, each with a fresh client; the first's
  // figures at the top level (and it is the one the update part uses).
  for (std::size_t i = 0; i < o.nprobe.size(); ++i) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto transport,
                                client::ProviderClient::connect(provider->connect_options()));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto sc,
                                client::SearchClient::open(thin, std::move(transport), oo));
    progress(fmt::format("{} searches end to end at nprobe {}", o.online_queries, o.nprobe[i]));
    const auto searched = timed_searches(*sc, queries, o.nprobe[i], o, progress);
    out["by_nprobe"][std::to_string(o.nprobe[i])] = searched;
    if (i == 0) out.update(searched);
  }
  if (o.update_fraction > 0) {
    PRIVSEARCH_ASSIGN_OR_RETURN(out["update"],
                                update_part(o, gen, dir, thin, *provider, oo, progress));
  }
  provider->stop();
  return out;
}

}  // namespace

Result<nlohmann::json> run_scale_bench(const ScaleBenchOptions& o) {
  if (o.queries == 0 || o.nprobe.empty() ||
      std::find(o.nprobe.begin(), o.nprobe.end(), std::size_t{0}) != o.nprobe.end()) {
    return invalid_argument_error("--queries and every --scale-nprobe must be positive");
  }
  const Progress progress("bench scale: ");
  const Synthetic gen(o.input_dim);
  const auto dir = scale_dir(o) / "index";
  nlohmann::json out;
  out["machine"] = machine_description();
  out["docs"] = o.docs;
  out["dim"] = o.dim;
  out["pq_m"] = o.pq_m;
  out["k"] = o.k;
  out["store_dtype"] = o.store_dtype == index::StoreDtype::kFloat16 ? "float16" : "float32";
  PRIVSEARCH_ASSIGN_OR_RETURN(out["build"], ensure_index(o, dir, gen, progress));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto projection,
                              index::load_projection(dir / "projection.bin"));
  const auto queries = make_bench_queries(
      o.docs, o.input_dim, std::max(o.queries, o.online_queries), gen, projection, o.dim);
  {
    progress("opening the exact store (every row hashed)");
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto store, index::ExactStore::open(dir / "exact.store"));
    SelfQueries offline = queries;
    offline.sources.resize(o.queries);
    offline.projected_flat.resize(o.queries * o.dim);
    PRIVSEARCH_ASSIGN_OR_RETURN(out["ivf"], offline_part(o, dir, store, offline, progress));
  }
  if (o.online_queries > 0) {
    PRIVSEARCH_ASSIGN_OR_RETURN(out["online"], online_part(o, dir, queries, gen, progress));
  }
  return out;
}

}  // namespace privsearch::tools
