// `privsearch bench <suite>`: run one benchmark suite (tools/suites/) and print one JSON object.
#include <iostream>
#include <map>
#include <optional>

#include "ckks/param_sets.h"
#include "commands/command.h"
#include "rerank/layout.h"
#include "suites/bench_abuse.h"
#include "suites/bench_abuse_classes.h"
#include "suites/bench_ckks.h"
#include "suites/bench_cluster.h"
#include "suites/bench_compress.h"
#include "suites/bench_e2e.h"
#include "suites/bench_ivf.h"
#include "suites/bench_pir.h"
#include "suites/bench_pq.h"
#include "suites/bench_private.h"
#include "suites/bench_rerank.h"
#include "suites/bench_scale.h"
#include "suites/bench_systems.h"

namespace privsearch::tools {
namespace {

struct BenchArgs {
  std::string suite;
  std::size_t runs = 0;                // 0: each suite's default
  std::optional<std::size_t> queries;  // --queries when given (suites differ in the default)
  CkksBenchOptions ckks;
  RerankBenchOptions rerank;
  PqBenchOptions pq;
  SystemsBenchOptions systems;
  PirBenchOptions pir;
  std::vector<std::string> pir_backends = {"hintless", "zippir"};
  std::vector<std::size_t> pir_record_bytes = {16384};
  E2eBenchOptions e2e;
  AbuseBenchOptions abuse;
  ClusterBenchOptions cluster;
  PrivateBenchOptions private_search;
  IvfBenchOptions ivf;
  ScaleBenchOptions scale;
  std::string scale_store_dtype = "float16";
};

// ---- options shared by several suites ---------------------------------------------------------

void add_runs(CLI::App* cmd, BenchArgs& a, const char* defaults) {
  cmd->add_option("--runs", a.runs, std::string("Timed runs per figure (") + defaults + ")")
      ->check(CLI::Range(3, 100000));
}
void add_index(CLI::App* cmd, BenchArgs& a) {
  cmd->add_option("--index", a.systems.index, "Index directory (default build/demo/index-scifact)");
}
void add_candidates(CLI::App* cmd, BenchArgs& a) {
  cmd->add_option("--candidates", a.e2e.k, "K, candidates reranked per search (default 100)")
      ->check(CLI::Range(std::size_t{1}, rerank::kMaxCandidates));
}
void add_docs_and_queries(CLI::App* cmd, BenchArgs& a, const char* docs, const char* queries) {
  cmd->add_option("--docs", a.e2e.docs, docs)->check(CLI::Range(1000, 100000000));
  cmd->add_option("--queries", a.queries, queries)->check(CLI::Range(1, 1000000));
}

// ---- one function per suite: its options, then how it runs --------------------------------------

void add_ckks_options(CLI::App* cmd, BenchArgs& a) {
  cmd->add_option("--preset", a.ckks.presets, "Preset(s) to run (default: all)")
      ->check(CLI::IsMember(ckks::preset_names()));
  cmd->add_option("--warmup", a.ckks.warmup, "Untimed warm-up runs")->check(CLI::Range(1, 1000));
  add_runs(cmd, a, ">= 20, default 50");
}
Result<nlohmann::json> run_ckks(BenchArgs& a) {
  if (a.runs != 0) {
    if (a.runs < 20) return invalid_argument_error("`--runs` must be >= 20 for the ckks suite");
    a.ckks.runs = a.runs;
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto r, run_ckks_bench(a.ckks));
  return r.to_json();
}

void add_rerank_options(CLI::App* cmd, BenchArgs& a) {
  cmd->add_option("--kernel", a.rerank.kernels,
                  "Kernel(s), comma-separated: naive, grouped, one_response, fast, packed "
                  "(default: all five at d'=672, K=100, the fast kernel at K=20, 200 and "
                  "d'=192, 384, 768, the packed kernel at K=20, 200, 1024, both fast ones on two "
                  "threads)")
      ->delimiter(',');
  cmd->add_option("--dim", a.rerank.dims, "Projected dimension(s) d'")->check(CLI::Range(1, 4096));
  cmd->add_option("--k", a.rerank.ks, "Candidate count(s) K")
      ->check(CLI::Range(std::size_t{1}, rerank::kMaxCandidates));
  cmd->add_option("--kernel-threads", a.rerank.threads,
                  "Fast-kernel thread count(s) (default 1, and 2 at d' = 672, K = 100 in the "
                  "default set)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{64}));
  cmd->add_option("--order-queries", a.rerank.order_queries,
                  "Random queries for top10_order_match (default 200)");
  add_runs(cmd, a, "default 20");
}
Result<nlohmann::json> run_rerank(BenchArgs& a) {
  if (a.runs != 0) a.rerank.runs = a.runs;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto r, run_rerank_bench(a.rerank));
  return r.to_json();
}

void add_pq_options(CLI::App* cmd, BenchArgs& a) {
  cmd->add_option("--codes", a.pq.codes, "Documents scanned (default 1,000,000)");
  cmd->add_option("--train", a.pq.train, "PQ training vectors (default 200,000; 0 skips train_s)");
  cmd->add_option("--svd-rows", a.pq.svd_rows,
                  "SVD fit rows of dimension 768 (default 200,000; 0 skips svd_fit_s)");
  add_runs(cmd, a, "default 20");
}
Result<nlohmann::json> run_pq(BenchArgs& a) {
  if (a.runs != 0) a.pq.runs = a.runs;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto r, run_pq_bench(a.pq));
  return r.to_json();
}

void add_e2e_options(CLI::App* cmd, BenchArgs& a) {
  add_docs_and_queries(cmd, a,
                       "Synthetic documents (default 1,000,000; built once under build/bench-e2e)",
                       "Timed searches (default 200)");
  add_candidates(cmd, a);
  cmd->add_option("--fetch", a.e2e.fetch,
                  "Also fetch this many payloads per round privately, as one search's top "
                  "documents (hintless: one batch; default 0)")
      ->check(CLI::Range(0, 64));
  cmd->add_flag("--access-private", a.e2e.access_private,
                "Fully private rounds (access-private scoring, then --fetch documents by PIR) on "
                "an index with the scoring database (built once into its own cache entry)");
  cmd->add_flag("--private-lists", a.e2e.ivf_private_lists,
                "Cold searches on the IVF index (built once into its own cache entry) with the "
                "probed lists fetched by PIR (provider --pir-lists), then --fetch documents");
  cmd->add_option("--private-dim,--e2e-private-dim", a.e2e.private_dim,
                  "With --access-private: coordinates of the scoring matrix (default 192)")
      ->check(CLI::Range(16, 2048));
  cmd->add_option("--pir-backend,--e2e-pir-backend", a.e2e.pir_backend,
                  "The provider's --pir-backend for --fetch (default: its default, hintless)")
      ->check(CLI::IsMember({"hintless", "zippir"}));
  cmd->add_option("--fetch-rounds", a.e2e.fetches, "Timed fetch rounds (default 5)")
      ->check(CLI::Range(1, 1000));
}
Result<nlohmann::json> run_e2e(BenchArgs& a) {
  if (a.queries) a.e2e.queries = *a.queries;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto r, run_e2e_bench(a.e2e));
  return r.to_json();
}

void add_pir_options(CLI::App* cmd, BenchArgs& a) {
  cmd->add_option("--db-mb", a.pir.db_mb,
                  "Database size(s) in MiB (default 1024; memory ~1.7x the size)")
      ->check(CLI::Range(std::size_t{1}, rerank::kMaxCandidates));
  cmd->add_option("--record-bytes", a.pir_record_bytes,
                  "Record size(s) in bytes (default 16384), e.g. 64,2048,32768")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--backend", a.pir_backends,
                  "Backend(s) measured side by side in one run: hintless (YPIR+SP, the default), "
                  "zippir (the seed paper's); default hintless,zippir. --shards and "
                  "--passes-only measure ZipPIR alone")
      ->delimiter(',')
      ->check(CLI::IsMember({"hintless", "zippir"}));
  cmd->add_option("--threads", a.pir.threads, "Threads for the offline work (default: all cores)");
  cmd->add_option("--shards", a.pir.shards,
                  "Row shard counts to measure next to the single server (e.g. 3; each shard's "
                  "answer timed alone, the assembled bytes compared with one server's)")
      ->delimiter(',')
      ->check(CLI::Range(std::size_t{1}, std::size_t{64}));
  cmd->add_flag("--passes-only", a.pir.passes_only,
                "Only compare the database pass (D . qu) of one server with each --shards "
                "count's shards, interleaved round by round (no hint: seconds even at 1 GiB)");
  cmd->add_option("--batch", a.pir.batch,
                  "Hintless: queries answered in one timed batch (default 3; a private-lists "
                  "search sends up to 32)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--hint-bits", a.pir.hint_bits, "Bits of ZipPIR's rescaled hint (default 17)")
      ->check(CLI::Range(9, 32));
  add_runs(cmd, a, "default 20");
}
// Both backends side by side, or ZipPIR's own figures (--backend zippir, --shards,
// --passes-only).
Result<nlohmann::json> run_pir(BenchArgs& a) {
  if (a.runs != 0) a.pir.runs = a.runs;
  const bool zippir_only = a.pir_backends == std::vector<std::string>{"zippir"};
  if (zippir_only || !a.pir.shards.empty() || a.pir.passes_only) {
    a.pir.record_bytes = a.pir_record_bytes.front();
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto r, run_pir_bench(a.pir));
    return r.to_json();
  }
  return run_pir_backends(a.pir, a.pir_backends, a.pir_record_bytes);
}

void add_compress_options(CLI::App* cmd, BenchArgs& a) {
  cmd->add_option("--threads", a.pir.threads, "Threads for the offline work (default: all cores)");
  add_runs(cmd, a, "default 3");
}
Result<nlohmann::json> run_compress(BenchArgs& a) {
  CompressBenchOptions o;
  if (a.runs != 0) o.runs = a.runs;
  o.threads = a.pir.threads;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto r, run_compress_bench(o));
  return r.to_json();
}

void add_systems_options(CLI::App* cmd, BenchArgs& a) {
  add_index(cmd, a);
  add_candidates(cmd, a);
}
Result<nlohmann::json> run_systems(BenchArgs& a) {
  a.systems.k = a.e2e.k;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto r, run_systems_bench(a.systems));
  return r.to_json();
}

void add_abuse_options(CLI::App* cmd, BenchArgs& a) {
  add_index(cmd, a);
  cmd->add_option("--abuse-s", a.abuse.abuse_s,
                  "Seconds of legitimate searches during each abuse class (default 8)")
      ->check(CLI::Range(1.0, 600.0));
  cmd->add_option("--class", a.abuse.classes,
                  "Class(es), repeatable: stalled_streams, key_sets, pir_setups, overload, "
                  "unread_answers, continuation_flood, connection_flood, and the browser "
                  "endpoint's browser_bodies, browser_ranges, browser_slow_reads, "
                  "browser_bad_headers, browser_cross_origin, browser_many_addresses (default all)")
      ->check(CLI::IsMember(abuse::class_names()));
  cmd->add_option("--front", a.abuse.front,
                  "The provider's --front, haproxy (default) or none (to compare)")
      ->check(CLI::IsMember({"haproxy", "none"}));
}
Result<nlohmann::json> run_abuse(BenchArgs& a) {
  a.abuse.index = a.systems.index;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto r, run_abuse_bench(a.abuse));
  return r.to_json();
}

void add_cluster_options(CLI::App* cmd, BenchArgs& a) {
  add_index(cmd, a);
  add_candidates(cmd, a);
  cmd->add_option("--replicas", a.cluster.replicas,
                  "Replica counts to measure through the balancer (default 1,2,3)")
      ->delimiter(',')
      ->check(CLI::Range(std::size_t{1}, std::size_t{16}));
  cmd->add_option("--clients", a.cluster.clients,
                  "Closed-loop connections per replica count (default 6)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{256}));
  cmd->add_option("--requests", a.cluster.requests_per_level,
                  "Requests per replica count (default 240)")
      ->check(CLI::Range(std::size_t{10}, std::size_t{1000000}));
  cmd->add_option("--threads-per-replica", a.cluster.threads_per_replica,
                  "Worker threads of each replica (default 1)")
      ->check(CLI::Range(1u, 64u));
}
Result<nlohmann::json> run_cluster(BenchArgs& a) {
  a.cluster.index = a.systems.index;
  a.cluster.k = a.e2e.k;
  return run_cluster_bench(a.cluster);
}

void add_dataset(CLI::App* cmd, BenchArgs& a) {
  cmd->add_option("--dataset", a.private_search.dataset,
                  "BEIR collection for nDCG@10 (and the linkability audit) (default "
                  "../shared/data/scifact; empty to skip)");
}

void add_private_options(CLI::App* cmd, BenchArgs& a) {
  add_docs_and_queries(cmd, a, "Synthetic documents (default 1,000,000)",
                       "Timed searches (default 100)");
  add_candidates(cmd, a);
  add_dataset(cmd, a);
  cmd->add_option("--clusters", a.private_search.m, "Clusters scored per query (m, default 8)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--private-dim", a.private_search.private_dim,
                  "Coordinates per document in the scoring matrix (default 192)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--score-bits", a.private_search.score_bits,
                  "Plaintext modulus bits log p (default 14)")
      ->check(CLI::Range(8u, 20u));
  cmd->add_option("--fill", a.private_search.fill,
                  "Documents per slot on average (default 0.9; spare slots hold overlap)")
      ->check(CLI::Range(0.2, 1.0));
  cmd->add_option("--overlap", a.private_search.overlap,
                  "Share of documents also copied into a neighbouring cluster (default 0)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--cluster-rows", a.private_search.cluster_rows,
                  "Documents per cluster (default 4 sqrt(N) within [64, 4096])")
      ->check(CLI::Range(64u, 65536u));
}
Result<nlohmann::json> run_private(BenchArgs& a) {
  a.private_search.docs = a.e2e.docs;
  a.private_search.k = a.e2e.k;
  if (a.queries) a.private_search.queries = *a.queries;
  return run_private_bench(a.private_search);
}

// The IVF shape options ivf and scale share.
void add_ivf_shape(CLI::App* cmd, BenchArgs& a) {
  cmd->add_option("--lists", a.ivf.lists, "IVF lists of the synthetic index (default N / 250)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 22));
  cmd->add_option("--route-dim", a.ivf.route_dim,
                  "Coordinates the centroids route on (default 128, capped at d')")
      ->check(CLI::Range(std::size_t{1}, std::size_t{4096}));
  cmd->add_option("--spill", a.ivf.spill, "Lists each document is put in (default 2)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{8}));
  cmd->add_option("--warm-cache-mb", a.ivf.warm_cache_mb,
                  "The client's list cache for client_bytes_per_search_warm, and scale's "
                  "end-to-end client's memory cache (default 64)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 20));
}

void add_bench_ivf_options(CLI::App* cmd, BenchArgs& a) {
  add_docs_and_queries(cmd, a, "Synthetic documents (default 1,000,000)",
                       "Timed searches (default: the suite's)");
  add_candidates(cmd, a);
  add_dataset(cmd, a);
  add_ivf_shape(cmd, a);
  cmd->add_option("--nprobe", a.ivf.nprobe, "Lists probed per query (default 16,32,64)")
      ->delimiter(',')
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 22));
  cmd->add_option("--list-pq-m", a.ivf.list_pq_m,
                  "Subquantizers of the lists' own PQ codes (default: the flat artifact's)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{4096}));
  cmd->add_option("--dataset-lists", a.ivf.dataset_lists,
                  "IVF lists of the --dataset index (default N / 250)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 22));
  cmd->add_option("--dataset-nprobe", a.ivf.dataset_nprobe,
                  "Lists probed per query on the --dataset index (default 1,2,4,8)")
      ->delimiter(',')
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 22));
}
Result<nlohmann::json> run_ivf(BenchArgs& a) {
  a.ivf.docs = a.e2e.docs;
  a.ivf.k = a.e2e.k;
  a.ivf.dataset = a.private_search.dataset;
  if (a.queries) a.ivf.queries = *a.queries;
  return run_ivf_bench(a.ivf);
}

void add_scale_options(CLI::App* cmd, BenchArgs& a) {
  add_docs_and_queries(cmd, a,
                       "Documents of the index (e.g. 10000000; built once, resumably, under "
                       "build/bench-scale)",
                       "Self-retrieval queries (default 200)");
  add_candidates(cmd, a);
  add_ivf_shape(cmd, a);
  cmd->add_option("--nprobe,--scale-nprobe", a.scale.nprobe,
                  "Lists probed per query, one or more (default 32; each searched end to end "
                  "against the one provider; the first reported at the top level and used by "
                  "the update part)")
      ->delimiter(',')
      ->check(CLI::Range(std::size_t{1}, std::size_t{4096}));
  cmd->add_option("--online-queries", a.scale.online_queries,
                  "End-to-end searches through a provider process (default 100; 0 skips)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{100000}));
  cmd->add_option("--update-fraction", a.scale.update_fraction,
                  "Documents appended after the online searches, as a fraction of --docs "
                  "(default 0.01; a tenth as many deleted; 0 skips the update figures)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--store-dtype", a.scale_store_dtype,
                  "The exact store's values, float16 (default; 13.4 GB at 10M) or float32")
      ->check(CLI::IsMember({"float16", "float32"}));
}
Result<nlohmann::json> run_scale(BenchArgs& a) {
  a.scale.docs = a.e2e.docs;
  a.scale.k = a.e2e.k;
  if (a.queries) a.scale.queries = *a.queries;
  if (a.ivf.lists != 0) a.scale.lists = a.ivf.lists;
  if (a.ivf.route_dim != 0) a.scale.route_dim = a.ivf.route_dim;
  a.scale.spill = a.ivf.spill;
  a.scale.warm_cache_mb = a.ivf.warm_cache_mb;
  a.scale.store_dtype =
      a.scale_store_dtype == "float32" ? index::StoreDtype::kFloat32 : index::StoreDtype::kFloat16;
  return run_scale_bench(a.scale);
}

struct Suite {
  const char* name;
  const char* description;
  void (*add_options)(CLI::App*, BenchArgs&);
  Result<nlohmann::json> (*run)(BenchArgs&);
};

// In the order `privsearch bench --help` lists them.
constexpr Suite kSuites[] = {
    {"ckks", "CKKS core per preset", add_ckks_options, run_ckks},
    {"rerank", "The encrypted rerank kernels", add_rerank_options, run_rerank},
    {"pq", "Index build and candidate scan", add_pq_options, run_pq},
    {"e2e", "Private search end to end, provider process over TLS on loopback", add_e2e_options,
     run_e2e},
    {"pir",
     "The PIR backends side by side: hintless and ZipPIR online, offline, preprocessing, "
     "client costs, sizes",
     add_pir_options, run_pir},
    {"compress", "LWE compression with Paillier", add_compress_options, run_compress},
    {"systems",
     "Closed-loop saturation, key epochs, vector-return baselines against a provider process",
     add_systems_options, run_systems},
    {"abuse", "Provider memory and legitimate latency under hostile clients", add_abuse_options,
     run_abuse},
    {"cluster",
     "Replicas behind HAProxy sharing state in Redis: throughput per replica count, budget "
     "check, key pull, state bytes",
     add_cluster_options, run_cluster},
    {"private",
     "Access-private search: server time, bytes, hint, client time, quality, linkability",
     add_private_options, run_private},
    {"ivf",
     "IVF-partitioned public index: client bytes, scan time, quality and probed-list leakage "
     "per nprobe",
     add_bench_ivf_options, run_ivf},
    {"scale",
     "The index at --docs 10000000: streaming resumable build, client bytes, scan, Hit@10 and "
     "end-to-end latency",
     add_scale_options, run_scale},
};

}  // namespace

// One subcommand per suite, each with its own options and --help.
Command add_bench_command(CLI::App& parent) {
  auto* cmd = parent.add_subcommand(
      "bench", "Run a benchmark suite and print one JSON object (privsearch bench <suite> --help)");
  cmd->require_subcommand(1);
  auto a = std::make_shared<BenchArgs>();
  auto chosen = std::make_shared<const Suite*>(nullptr);
  for (const Suite& suite : kSuites) {
    auto* sub = cmd->add_subcommand(suite.name, suite.description);
    sub->add_flag("--json")->description(
        "Print one JSON object (the default and only format; accepted for scripts)");
    suite.add_options(sub, *a);
    sub->callback([chosen, &suite] { *chosen = &suite; });
  }
  return {cmd, [a, chosen] {
            if (*chosen == nullptr) return fail(invalid_argument_error("no suite named"), "bench");
            a->suite = (*chosen)->name;
            auto result = (*chosen)->run(*a);
            if (!result.ok()) return fail(result.status(), "bench");
            std::cout << result->dump(2) << std::endl;
            return 0;
          }};
}

}  // namespace privsearch::tools
