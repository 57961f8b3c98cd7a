#include "suites/bench_e2e.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <thread>

#include "client/payload_fetcher.h"
#include "client/search_client.h"
#include "core/csprng.h"
#include "core/elapsed.h"
#include "harness/measure.h"
#include "harness/progress.h"
#include "harness/spawned_provider.h"
#include "harness/synthetic_index.h"
#include "index/artifacts/payload_store.h"
#include "index/build.h"
#include "version/index_version.h"

namespace privsearch::tools {

using client::Stage;
namespace {

using Clock = std::chrono::steady_clock;

// The suite against one provider process over one synthetic index.
class E2eBench {
 public:
  E2eBench(const E2eBenchOptions& o, const Synthetic& gen, std::filesystem::path index_dir,
           const SpawnedProvider& provider)
      : o_(o),
        gen_(gen),
        index_dir_(std::move(index_dir)),
        provider_(provider),
        pick_(Prng::create()) {
    so_.candidates = o.k;
  }

  // Queries: noisy copies of random documents (so the candidates are meaningful).
  std::vector<float> query() { return gen_.vector(pick_.uniform_below(o_.docs), 0.6); }

  // One client, one search at a time: where the time of a search goes.
  Status latencies(E2eBenchResult& out) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto sc, connect_search_client(index_dir_, provider_));
    auto t0 = Clock::now();
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto first, sc->search(client::Query::vector(query()), so_));
    out.first_result_ms = ms_since(t0);
    out.request_bytes = first.timing[Stage::kRpc].bytes_sent;
    out.response_bytes = first.timing[Stage::kRpc].bytes_received;
    out.key_upload_bytes = first.timing[Stage::kKeyUpload].bytes_sent;
    auto& l = out.latencies;
    double cpu0 = 0;
    for (std::size_t i = 0; i < 5 + o_.queries; ++i) {
      if (i == 5) cpu0 = process_cpu_seconds(provider_.pid());
      auto r = sc->search(client::Query::vector(query()), so_);
      if (!r.ok()) {
        ++out.failures;
        continue;
      }
      if (i < 5) continue;
      const auto& t = r.value().timing;
      l.online.push_back(t.total_ms);
      l.pq_scan.push_back(t[Stage::kCandidates].ms);
      l.encrypt.push_back(t[Stage::kEncrypt].ms);
      l.rpc.push_back(t[Stage::kRpc].ms);
      l.provider.push_back(t.provider_ms);
      l.decrypt.push_back(t[Stage::kDecrypt].ms);
    }
    if (o_.queries > 0) {
      out.provider_core_s_per_search =
          (process_cpu_seconds(provider_.pid()) - cpu0) / static_cast<double>(o_.queries);
    }
    return Status();
  }

  // Throughput: `clients` threads, each with its own key epoch, `throughput_requests` in all.
  Result<E2eThroughput> throughput(int clients) {
    std::vector<std::unique_ptr<client::SearchClient>> cs;
    for (int c = 0; c < clients; ++c) {
      PRIVSEARCH_ASSIGN_OR_RETURN(auto s, connect_search_client(index_dir_, provider_));
      PRIVSEARCH_RETURN_IF_ERROR(
          s->search(client::Query::vector(query()), so_).status());  // keys uploaded
      cs.push_back(std::move(s));
    }
    const auto n = static_cast<std::size_t>(clients);
    std::vector<std::vector<std::vector<float>>> qs(n);
    for (std::size_t i = 0; i < o_.throughput_requests; ++i) qs[i % n].push_back(query());
    std::atomic<std::size_t> fails{0};
    const auto t0 = Clock::now();
    std::vector<std::thread> threads;
    for (std::size_t c = 0; c < n; ++c) {
      threads.emplace_back([&, c] {
        for (const auto& q : qs[c]) {
          if (!cs[c]->search(client::Query::vector(q), so_).ok()) ++fails;
        }
      });
    }
    for (auto& t : threads) t.join();
    const double s = ms_since(t0) / 1000;
    return E2eThroughput{static_cast<double>(o_.throughput_requests) / s, fails.load()};
  }

  // The records a private fetch must return, read through the index version (hashed).
  Result<index::PayloadStore> expected_payloads() const {
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto v,
                                version::IndexVersion::open(index_dir_, version::tool_spec()));
    return v.payloads();
  }

  // Private payload fetch after the search timings (no PIR client existed before, so ZipPIR's
  // background hint work did not overlap them). A round reads one search's top `fetch`
  // documents: hintless sends them as one batch (no setup, nothing to wait for), ZipPIR one
  // after the other once each hint is ready. fetch_ms is the critical path (ZipPIR: without the
  // wait for the hint, reported apart).
  Result<E2eFetchFigures> fetches() {
    Progress("bench e2e: ")(
        fmt::format("private payload fetch ({} rounds of {})", o_.fetches, o_.fetch));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto fsc, connect_search_client(index_dir_, provider_));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto payloads, expected_payloads());
    const double cpu0 = process_cpu_seconds(provider_.pid());
    PRIVSEARCH_ASSIGN_OR_RETURN(auto fetcher, client::PayloadFetcher::create(
                                                  fsc->transport(), fsc->artifact_version(), {}));
    fetcher->precompute_async();
    E2eFetchFigures f;
    f.fetch = o_.fetch;
    f.backend = fetcher->hintless() ? "hintless" : "zippir";
    for (std::size_t round = 0; round < o_.fetches; ++round) {
      std::vector<std::uint64_t> docs;
      for (std::size_t i = 0; i < o_.fetch; ++i) docs.push_back(pick_.uniform_below(o_.docs));
      client::FetchTiming ft;
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto texts, fetcher->fetch_many(docs, &ft));
      for (std::size_t i = 0; i < docs.size(); ++i) {
        const auto want = payloads.text(docs[i]);
        if (!want.ok() || *want != texts[i]) ++f.wrong_payloads;
      }
      f.fetch_ms.push_back(ft.total_ms - ft.wait_ms);
      f.wait_ms.push_back(ft.wait_ms);
      f.provider_ms.push_back(ft.provider_ms);
      f.query_bytes = ft.query_bytes;
      f.response_bytes = ft.response_bytes;
    }
    const auto rounds = static_cast<double>(std::max<std::size_t>(1, o_.fetches));
    f.provider_core_s_per_round = (process_cpu_seconds(provider_.pid()) - cpu0) / rounds;
    PRIVSEARCH_ASSIGN_OR_RETURN(v1::PirInfo pinfo, fsc->transport().pir_info());
    f.setup_bytes = fetcher->setup_bytes();
    f.pir_db_bytes = pinfo.pir_db_bytes();
    f.offline_wall_s = pinfo.offline_s_per_query();
    f.offline_cpu_s = pinfo.offline_cpu_s_per_query();
    return f;
  }

  // Fully private rounds: an access-private search (the provider sees neither candidates nor
  // clusters), then its top `fetch` documents in one PIR batch. Per round: the time of both,
  // the provider process's CPU, the bytes both ways, and whether the source document of the
  // noisy query is in the top 10 (hit10).
  Result<E2ePrivateFigures> fully_private() {
    Progress("bench e2e: ")(fmt::format("{} rounds ({} + fetch {})", o_.queries,
                                        o_.access_private ? "access-private" : "lists by PIR, cold",
                                        o_.fetch));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto sc, open_client());
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto payloads, expected_payloads());
    // The fetcher's own connection: the search client is replaced every round in the cold IVF
    // mode, and a PayloadFetcher holds its transport by reference.
    PRIVSEARCH_ASSIGN_OR_RETURN(auto fetch_transport,
                                client::ProviderClient::connect(provider_.connect_options()));
    std::unique_ptr<client::PayloadFetcher> fetcher;
    if (o_.fetch > 0) {
      PRIVSEARCH_ASSIGN_OR_RETURN(
          fetcher, client::PayloadFetcher::create(*fetch_transport, sc->artifact_version(), {}));
    }
    auto po = client::access_private_search();
    po.candidates = o_.k;
    E2ePrivateFigures f;
    f.backend = fetcher ? (fetcher->hintless() ? "hintless" : "zippir") : "none";
    double cpu0 = 0;
    std::size_t bytes = 0;
    for (std::size_t i = 0; i < 3 + o_.queries; ++i) {
      if (i == 3) cpu0 = process_cpu_seconds(provider_.pid());  // after 3 warm-up rounds
      const std::uint64_t source = pick_.uniform_below(o_.docs);
      if (o_.ivf_private_lists) {  // cold: a new client, no list cached
        PRIVSEARCH_ASSIGN_OR_RETURN(sc, open_client());
      }
      const auto t0 = Clock::now();
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto r, search_once(*sc, gen_.vector(source, 0.6), po));
      const double search_ms = ms_since(t0);
      std::vector<std::uint64_t> docs;
      for (std::size_t h = 0; h < std::min(o_.fetch, r.hits.size()); ++h)
        docs.push_back(r.hits[h].doc);
      client::FetchTiming ft;
      if (fetcher && !docs.empty()) {
        PRIVSEARCH_ASSIGN_OR_RETURN(const auto texts, fetcher->fetch_many(docs, &ft));
        for (std::size_t h = 0; h < docs.size(); ++h) {
          const auto want = payloads.text(docs[h]);
          if (!want.ok() || *want != texts[h]) ++f.wrong_payloads;
        }
      }
      if (i < 3) continue;
      f.search_ms.push_back(search_ms);
      f.fetch_ms.push_back(ms_since(t0) - search_ms);
      f.online_ms.push_back(ms_since(t0));
      bytes += r.timing[Stage::kRpc].bytes_sent + r.timing[Stage::kRpc].bytes_received +
               r.timing[Stage::kListPir].bytes() + ft.query_bytes + ft.response_bytes;
      for (std::size_t h = 0; h < std::min<std::size_t>(10, r.hits.size()); ++h) {
        if (r.hits[h].doc == source) ++f.hits10;
      }
      ++f.rounds;
    }
    f.provider_core_s_per_search = (process_cpu_seconds(provider_.pid()) - cpu0) /
                                   static_cast<double>(std::max<std::size_t>(1, f.rounds));
    f.client_bytes_per_search = bytes / std::max<std::size_t>(1, f.rounds);
    return f;
  }

 private:
  // A search client for the fully private rounds (IVF with private lists when asked).
  Result<std::unique_ptr<client::SearchClient>> open_client() {
    if (!o_.ivf_private_lists) return connect_search_client(index_dir_, provider_);
    PRIVSEARCH_ASSIGN_OR_RETURN(auto transport,
                                client::ProviderClient::connect(provider_.connect_options()));
    client::OpenOptions oo;
    oo.candidates = client::CandidateIndex::kIvf;
    oo.disk_cache = false;
    oo.private_lists = true;
    return client::SearchClient::open(index_dir_, std::move(transport), oo);
  }
  Result<client::SearchResult> search_once(client::SearchClient& sc, const std::vector<float>& q,
                                           const client::SearchOptions& po) {
    if (o_.access_private) return sc.search(client::Query::vector(q), po);
    client::SearchOptions so;
    so.candidates = o_.k;
    return sc.search(client::Query::vector(q), so);
  }

  const E2eBenchOptions& o_;
  const Synthetic& gen_;
  std::filesystem::path index_dir_;
  const SpawnedProvider& provider_;
  Prng pick_;
  client::SearchOptions so_;
};

}  // namespace

Result<E2eBenchResult> run_e2e_bench(const E2eBenchOptions& o) {
  if (o.docs < 1000 || o.k == 0 || o.k > o.docs) {
    return Status(StatusCode::kInvalidArgument,
                  "bench e2e: need --docs >= 1000 and 1 <= K <= docs");
  }
  const Synthetic gen(o.input_dim);
  PRIVSEARCH_ASSIGN_OR_RETURN(
      const auto index_dir,
      ensure_synthetic_index(o.cache, o.docs, o.input_dim, o.dim, o.pq_m, gen,
                             o.access_private ? o.private_dim : 0, o.ivf_private_lists));
  const std::string maxk = std::to_string(std::max<std::size_t>(1024, o.k));
  // The throughput clients share one address and upload their keys at once: no per-client
  // upload rate or concurrency limit here.
  std::vector<std::string> args = {"--max-candidates",
                                   maxk,
                                   "--key-uploads-per-minute",
                                   "0",
                                   "--max-concurrent-per-client",
                                   "0"};
  if (o.ivf_private_lists) args.push_back("--pir-lists");
  if (o.fetch == 0 && !o.ivf_private_lists) {
    args.push_back("--no-pir");
  } else {
    for (const char* a : {"--pir-offline-threads", "2", "--pir-ready", "2"}) args.push_back(a);
    if (!o.pir_backend.empty()) {
      args.push_back("--pir-backend");
      args.push_back(o.pir_backend);
    }
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto provider,
                              SpawnedProvider::start({index_dir, index_dir.parent_path(), args}));
  E2eBench bench(o, gen, index_dir, *provider);
  E2eBenchResult out;
  out.machine = machine_description();
  out.options = o;
  if (o.access_private || o.ivf_private_lists) {
    PRIVSEARCH_ASSIGN_OR_RETURN(out.fully_private, bench.fully_private());
    return out;
  }
  PRIVSEARCH_RETURN_IF_ERROR(bench.latencies(out));
  for (const int clients : {1, 2, 4}) {
    PRIVSEARCH_ASSIGN_OR_RETURN(out.throughput[clients], bench.throughput(clients));
    out.failures += out.throughput[clients].failures;
  }
  if (o.fetch > 0) {
    PRIVSEARCH_ASSIGN_OR_RETURN(out.fetch, bench.fetches());
  }
  return out;
}

namespace {

// The --fetch figures: the private payload fetch after each search.
void put_fetch(nlohmann::json& j, const E2eFetchFigures& f, const E2eBenchResult& r) {
  const auto& l = r.latencies;
  const auto provider_core_s_per_search = r.provider_core_s_per_search;
  const auto request_bytes = r.request_bytes;
  const auto response_bytes = r.response_bytes;
  j["fetch"] = f.fetch;
  j["fetch_backend"] = f.backend;
  j["fetch_ms"] = latency_summary(f.fetch_ms);
  j["fetch_provider_core_s_per_round"] = f.provider_core_s_per_round;
  // One search and its top-`fetch` documents, everything the provider spends on them
  // (ZipPIR's offline hints included: they run inside the provider process too).
  j["provider_core_s_per_search_with_fetch"] =
      provider_core_s_per_search + f.provider_core_s_per_round;
  j["client_bytes_per_search_with_fetch"] =
      request_bytes + response_bytes + f.query_bytes + f.response_bytes;
  j["online_ms_with_fetch_median"] =
      eval::describe(l.online).median + eval::describe(f.fetch_ms).median;
  j["fetch_wait_for_hint_ms"] = latency_summary(f.wait_ms);
  j["fetch_provider_ms"] = latency_summary(f.provider_ms);
  j["fetch_query_bytes"] = f.query_bytes;
  j["fetch_response_bytes"] = f.response_bytes;
  j["fetch_setup_bytes"] = f.setup_bytes;
  j["fetch_wrong_payloads"] = f.wrong_payloads;
  j["pir_db_bytes"] = f.pir_db_bytes;
  j["offline_s_per_query"] = {
      {"wall", f.offline_wall_s}, {"cpu_s", f.offline_cpu_s}, {"threads_per_hint", 1}};
}

// The fully private rounds (--access-private or --private-lists).
void put_fully_private(nlohmann::json& j, const E2ePrivateFigures& f, const E2eBenchOptions& o) {
  j["mode"] = o.access_private
                  ? "fully private: access-private scoring, then the top documents by PIR"
                  : "IVF lists by PIR (cold, a new client per search), candidate-mode rerank, "
                    "then the top documents by PIR";
  j["private_dim"] = o.private_dim;
  j["fetch"] = o.fetch;
  j["fetch_backend"] = f.backend;
  j["rounds"] = f.rounds;
  j["online_ms"] = latency_summary(f.online_ms);
  j["search_ms"] = latency_summary(f.search_ms);
  j["fetch_ms"] = latency_summary(f.fetch_ms);
  j["provider_core_s_per_search"] = f.provider_core_s_per_search;
  j["client_bytes_per_search"] = f.client_bytes_per_search;
  j["hit10"] = f.rounds == 0 ? 0.0 : static_cast<double>(f.hits10) / static_cast<double>(f.rounds);
  j["fetch_wrong_payloads"] = f.wrong_payloads;
}

}  // namespace

nlohmann::json E2eBenchResult::to_json() const {
  const auto& o = options;
  const auto& l = latencies;
  nlohmann::json j;
  j["suite"] = "e2e";
  j["machine"] = machine;
  j["docs"] = o.docs;
  j["input_dim"] = o.input_dim;
  j["dim"] = o.dim;
  j["pq_m"] = o.pq_m;
  j["k"] = o.k;
  j["transport"] = "gRPC over TLS 1.3, 127.0.0.1, provider in its own process";
  j["queries"] = l.online.size();
  j["online_ms"] = latency_summary(l.online);
  j["pq_scan_ms"] = latency_summary(l.pq_scan);
  j["encrypt_ms"] = latency_summary(l.encrypt);
  j["rpc_ms"] = latency_summary(l.rpc);
  j["provider_ms"] = latency_summary(l.provider);
  j["decrypt_ms"] = latency_summary(l.decrypt);
  // The provider's own capacity: one request occupies one core for provider_ms (the client
  // shares this machine, so measured throughput also pays for the client's work).
  const double median = eval::describe(l.provider).median;
  j["provider_capacity_rps_per_core"] = median > 0 ? std::round(100000.0 / median) / 100 : 0;
  j["request_bytes"] = request_bytes;
  j["response_bytes"] = response_bytes;
  j["key_upload_bytes"] = key_upload_bytes;
  j["provider_core_s_per_search"] = provider_core_s_per_search;
  j["first_result_ms"] = std::round(first_result_ms * 1000) / 1000;
  nlohmann::json tp = nlohmann::json::object();
  for (const auto& [clients, t] : throughput) {
    tp[std::to_string(clients)] = {{"throughput_rps", std::round(t.throughput_rps * 100) / 100},
                                   {"failures", t.failures}};
  }
  j["throughput"] = tp;
  if (fetch) put_fetch(j, *fetch, *this);
  if (fully_private) put_fully_private(j, *fully_private, options);
  j["failures"] = failures;
  j["note"] =
      "client and provider share this machine's cores; throughput counts whole searches "
      "(client PQ scan, encryption and decryption included)";
  return j;
}

}  // namespace privsearch::tools
