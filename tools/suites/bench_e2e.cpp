#include "suites/bench_e2e.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "harness/measure.h"
#include "harness/spawned_provider.h"
#include "harness/synthetic_index.h"
#include "client/payload_fetcher.h"
#include "client/search_client.h"
#include "core/csprng.h"
#include "index/build.h"
#include "index/manifest.h"
#include "index/payload_store.h"

namespace privsearch::tools {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}


}  // namespace

Result<nlohmann::json> run_e2e_bench(const E2eBenchOptions& o) {
  if (o.docs < 1000 || o.k == 0 || o.k > o.docs) {
    return Status(StatusCode::kInvalidArgument, "bench e2e: need --docs >= 1000 and 1 <= K <= docs");
  }
  const Synthetic gen(o.input_dim);
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto index_dir, ensure_synthetic_index(o.cache, o.docs, o.input_dim, o.dim, o.pq_m, gen));
  const std::string maxk = std::to_string(std::max<std::size_t>(1024, o.k));
  std::vector<std::string> args = {"--max-candidates", maxk};
  if (o.fetch == 0) {
    args.push_back("--no-pir");
  } else {
    for (const char* a : {"--pir-offline-threads", "2", "--pir-ready", "2"}) args.push_back(a);
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto provider, SpawnedProvider::start({index_dir, index_dir.parent_path(), args}));
  client::SearchOptions so;
  so.candidates = o.k;
  // Queries: noisy copies of random documents (so the candidates are meaningful).
  Prng pick = Prng::create();
  auto query = [&] { return gen.vector(pick.uniform_below(o.docs), 0.6); };

  PRIVSEARCH_ASSIGN_OR_RETURN(auto sc, connect_search_client(index_dir, *provider));
  auto t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto first, sc->search_vector(query(), so));
  const double first_result_ms = ms_since(t0);

  std::vector<double> online, pq, enc, rpc, prov, dec;
  std::size_t failures = 0;
  for (std::size_t i = 0; i < 5 + o.queries; ++i) {
    auto r = sc->search_vector(query(), so);
    if (!r.ok()) {
      ++failures;
      continue;
    }
    if (i < 5) continue;
    const auto& t = r.value().timing;
    online.push_back(t.total_ms);
    pq.push_back(t.pq_scan_ms);
    enc.push_back(t.encrypt_ms);
    rpc.push_back(t.rpc_ms);
    prov.push_back(t.provider_ms);
    dec.push_back(t.decrypt_ms);
  }

  nlohmann::json j;
  j["suite"] = "e2e";
  j["machine"] = machine_description();
  j["docs"] = o.docs;
  j["input_dim"] = o.input_dim;
  j["dim"] = o.dim;
  j["pq_m"] = o.pq_m;
  j["k"] = o.k;
  j["queries"] = online.size();
  j["transport"] = "gRPC over TLS 1.3, 127.0.0.1, provider in its own process";
  j["online_ms"] = latency_summary(online);
  j["pq_scan_ms"] = latency_summary(pq);
  j["encrypt_ms"] = latency_summary(enc);
  j["rpc_ms"] = latency_summary(rpc);
  j["provider_ms"] = latency_summary(prov);
  j["decrypt_ms"] = latency_summary(dec);
  {
    // The provider's own capacity: one request occupies one core for provider_ms (the client
    // shares this machine, so measured throughput below also pays for the client's work).
    const double median = eval::describe(prov).median;
    j["provider_capacity_rps_per_core"] = median > 0 ? std::round(100000.0 / median) / 100 : 0;
  }
  j["request_bytes"] = first.timing.request_bytes;
  j["response_bytes"] = first.timing.response_bytes;
  j["key_upload_bytes"] = first.timing.key_upload_bytes;
  j["first_result_ms"] = std::round(first_result_ms * 1000) / 1000;

  // Throughput: c client threads, each with its own key epoch, `throughput_requests` in all.
  nlohmann::json tp = nlohmann::json::object();
  for (const int clients : {1, 2, 4}) {
    std::vector<std::unique_ptr<client::SearchClient>> cs;
    for (int c = 0; c < clients; ++c) {
      PRIVSEARCH_ASSIGN_OR_RETURN(auto s, connect_search_client(index_dir, *provider));
      PRIVSEARCH_RETURN_IF_ERROR(s->search_vector(query(), so).status());  // keys uploaded
      cs.push_back(std::move(s));
    }
    std::vector<std::vector<std::vector<float>>> qs(static_cast<std::size_t>(clients));
    for (std::size_t i = 0; i < o.throughput_requests; ++i) {
      qs[i % static_cast<std::size_t>(clients)].push_back(query());
    }
    std::atomic<std::size_t> fails{0};
    t0 = Clock::now();
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c) {
      threads.emplace_back([&, c] {
        for (const auto& q : qs[static_cast<std::size_t>(c)]) {
          if (!cs[static_cast<std::size_t>(c)]->search_vector(q, so).ok()) ++fails;
        }
      });
    }
    for (auto& t : threads) t.join();
    const double s = ms_since(t0) / 1000;
    tp[std::to_string(clients)] = {
        {"throughput_rps", std::round(static_cast<double>(o.throughput_requests) / s * 100) / 100},
        {"failures", fails.load()}};
    failures += fails.load();
  }
  j["throughput"] = tp;
  if (o.fetch > 0) {
    // Private payload fetch after the search timings (no PIR client existed before, so the
    // background hint work did not overlap them). fetch_ms is the critical path once the
    // provider's hint and the client's offsets are ready: query + RPC + extract.
    fmt::print(stderr, "bench e2e: private payload fetch ({} rounds of {})\n", o.fetches, o.fetch);
    PRIVSEARCH_ASSIGN_OR_RETURN(auto fsc, connect_search_client(index_dir, *provider));
    const auto man = index::load_manifest(index_dir, /*verify=*/false);
    if (!man.ok()) return man.status();
    PRIVSEARCH_ASSIGN_OR_RETURN(
        const auto payloads,
        index::PayloadStore::open(index_dir / man.value().find("payloads")->file));
    client::FetchOptions fo;
    PRIVSEARCH_ASSIGN_OR_RETURN(auto fetcher, client::PayloadFetcher::create(
                                                  fsc->transport(), fsc->artifact_version(), fo));
    fetcher->precompute_async();
    std::vector<double> fetch_ms, wait_ms, provider_fetch_ms;
    std::size_t fq = 0, fr = 0, wrong = 0;
    for (std::size_t round = 0; round < o.fetches; ++round) {
      for (std::size_t k = 0; k < o.fetch; ++k) {
        const std::uint64_t doc = pick.uniform_below(o.docs);
        client::FetchTiming ft;
        auto text = fetcher->fetch(doc, &ft);
        if (!text.ok()) return text.status();
        const auto want = payloads.text(doc);
        if (!want.ok() || *want != *text) ++wrong;
        fetch_ms.push_back(ft.total_ms - ft.wait_ms);
        wait_ms.push_back(ft.wait_ms);
        provider_fetch_ms.push_back(ft.provider_ms);
        fq = ft.query_bytes;
        fr = ft.response_bytes;
      }
    }
    PRIVSEARCH_ASSIGN_OR_RETURN(v1::PirInfo pinfo, fsc->transport().pir_info());
    j["fetch"] = o.fetch;
    j["fetch_ms"] = latency_summary(fetch_ms);
    j["fetch_wait_for_hint_ms"] = latency_summary(wait_ms);
    j["fetch_provider_ms"] = latency_summary(provider_fetch_ms);
    j["fetch_query_bytes"] = fq;
    j["fetch_response_bytes"] = fr;
    j["fetch_setup_bytes"] = fetcher->setup_bytes();
    j["fetch_wrong_payloads"] = wrong;
    j["pir_db_bytes"] = pinfo.pir_db_bytes();
    j["offline_s_per_query"] = {{"wall", pinfo.offline_s_per_query()},
                                {"cpu_s", pinfo.offline_cpu_s_per_query()},
                                {"threads_per_hint", 1}};
  }
  j["failures"] = failures;
  j["note"] = "client and provider share this machine's cores; throughput counts whole searches "
              "(client PQ scan, encryption and decryption included)";
  return j;
}

}  // namespace privsearch::tools
