#include "suites/bench_private.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "experiments/audit_private.h"
#include "experiments/eval_private.h"
#include "experiments/eval_self_retrieval.h"
#include "experiments/offline_index.h"
#include "harness/measure.h"
#include "harness/progress.h"
#include "harness/synthetic_index.h"
#include "scoring/build.h"

namespace privsearch::tools {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// The scoring artifacts of the synthetic index, built once (first private_dim coordinates).
Result<scoring::ScoringArtifacts> ensure_scoring(const PrivateBenchOptions& o,
                                                 const index::ExactStore& store,
                                                 const Progress& progress, double& build_s) {
  scoring::ScoringBuildOptions so;
  so.dim = std::min<std::uint32_t>(o.private_dim, static_cast<std::uint32_t>(store.cols()));
  so.cluster_rows = o.cluster_rows != 0 ? o.cluster_rows : scoring::default_cluster_rows(o.docs);
  so.overlap = o.overlap;
  so.fill = o.fill;
  so.score_bits = o.score_bits;
  // Named by the bits the build will use (the default may change between builds of this tool).
  const std::uint32_t bits = so.score_bits != 0 ? so.score_bits : scoring::kDefaultScoreBits;
  const auto dir =
      o.private_cache / (fmt::format("{}-{}-{}-p{}-v{}", o.docs, so.dim, so.cluster_rows, bits,
                                     scoring::kScoringFormatVersion) +
                         (o.overlap > 0 ? fmt::format("-o{}", o.overlap) : "") +
                         (o.fill != 0.9 ? fmt::format("-f{}", o.fill) : ""));
  if (std::filesystem::exists(dir / scoring::kHintFile)) {
    progress("reusing " + dir.string());
    return scoring::load_scoring(dir);
  }
  index::Matrix x;
  x.rows = store.rows();
  x.cols = so.dim;
  x.data.resize(x.rows * x.cols);
  for (std::size_t r = 0; r < x.rows; ++r)
    std::copy_n(store.row(r), x.cols, x.data.data() + r * x.cols);
  const auto t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(auto a, scoring::build_scoring(x, so, progress.callback()));
  build_s = ms_since(t0) / 1000.0;
  std::filesystem::create_directories(dir);
  PRIVSEARCH_RETURN_IF_ERROR(scoring::save_scoring(dir, a));  // the hint, the resume marker, last
  return a;
}

// What the synthetic queries measured, summed over them.
struct PrivateRun {
  std::vector<double> server_ms, client_ms, encrypt_ms, decode_ms, mask_ms;
  std::size_t hit_private = 0, hit_candidate = 0, request_bytes = 0, response_bytes = 0;
  std::size_t source_in_clusters = 0, source_in_candidates = 0;
  bool sizes_constant = true;
};

// One self-retrieval query in both modes: candidate mode's exact rerank, then access-private
// scoring through the provider core (masks, encryption, answer, decoding timed apart).
Status measure_query(const OfflineIndex& ix, const scoring::ScoringArtifacts& art,
                     scoring::PrivateScorer& scorer, protocol::ProviderCore& core,
                     const std::vector<std::array<std::uint32_t, 2>>& clusters_of,
                     const PrivateBenchOptions& o, std::span<const float> z, std::size_t source,
                     bool first, Prng& prng, PrivateRun& run) {
  const auto& store = *ix.store;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto candidates, ix.scanner->search(z, o.k));
  auto ranked = exact_rerank(store, z, candidates);
  run.hit_candidate += in_top10(ranked, source);
  const auto clusters = scorer.choose_clusters(z, candidates, o.m);
  run.source_in_clusters += scoring::any_chosen(clusters_of[source], clusters);
  run.source_in_candidates +=
      std::find(candidates.begin(), candidates.end(), source) != candidates.end();
  auto t0 = Clock::now();
  PRIVSEARCH_RETURN_IF_ERROR(scorer.prepare(clusters.size(), prng));
  run.mask_ms.push_back(ms_since(t0));
  t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(auto pending, scorer.encrypt(z, clusters, prng));
  const auto req = private_request(ix.manifest.version_id, pending, art.layout.query_drop_bits);
  run.encrypt_ms.push_back(ms_since(t0));
  const auto resp = core.private_score(req);
  if (resp.has_error()) return internal_error("private scoring refused: " + resp.error().message());
  run.server_ms.push_back(resp.provider_ms());
  t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto scored, scorer.decode(std::move(pending), resp.answers()));
  run.decode_ms.push_back(ms_since(t0));
  run.client_ms.push_back(run.encrypt_ms.back() + run.decode_ms.back());
  ranked.clear();
  for (std::size_t i = 0; i < std::min<std::size_t>(10, scored.size()); ++i)
    ranked.push_back(scored[i].doc);
  run.hit_private += in_top10(ranked, source);
  if (first) {
    run.request_bytes = req.ByteSizeLong();
    run.response_bytes = resp.ByteSizeLong();
  }
  run.sizes_constant = run.sizes_constant && req.ByteSizeLong() == run.request_bytes &&
                       resp.ByteSizeLong() == run.response_bytes;
  return Status();
}

// The real-text figures on a BEIR collection: nDCG@10 in both modes and the linkability audit.
Status add_text_quality(const PrivateBenchOptions& o, const Progress& progress,
                        nlohmann::json& out) {
  scoring::ScoringBuildOptions text_scoring;  // the text default (dim 672), these bits
  text_scoring.score_bits = o.score_bits;
  PRIVSEARCH_ASSIGN_OR_RETURN(
      const auto dir,
      ensure_private_eval_index(o.dataset, "lexical", 672, text_scoring, progress.callback()));
  PrivateEvalOptions eo;
  eo.m = o.m;
  eo.k = o.k;
  eo.encrypted_queries = 0;  // quality only: the exactness is eval's and the tests'
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto q,
                              run_private_eval(dir, o.dataset, eo, progress.callback()));
  out["ndcg10_private"] = q.ndcg10_private;
  out["ndcg10_candidate"] = q.ndcg10_candidate;
  out["ndcg10_vs_candidate"] = q.ndcg10_private - q.ndcg10_candidate;
  PrivateAuditOptions ao;
  ao.m = o.m;
  ao.k = o.k;
  ao.max_queries = o.audit_queries;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto audit,
                              run_private_audit(dir, o.dataset, ao, progress.callback()));
  out["link_auc"] = audit.link_auc;
  out["link_auc_candidate_mode"] = audit.link_auc_candidate;
  out["quality_dataset"] = o.dataset.string();
  return Status();
}

}  // namespace

Result<nlohmann::json> run_private_bench(const PrivateBenchOptions& o) {
  const Progress progress;
  const Synthetic gen(o.input_dim);
  PRIVSEARCH_ASSIGN_OR_RETURN(
      const auto index_dir,
      ensure_synthetic_index(o.cache, o.docs, o.input_dim, o.dim, o.pq_m, gen));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto ix, OfflineIndex::open(index_dir));
  const auto& man = ix->manifest;
  const auto& store = *ix->store;
  double build_s = 0;
  PRIVSEARCH_ASSIGN_OR_RETURN(auto art, ensure_scoring(o, store, progress, build_s));
  const auto& shape = art.layout.shape;
  PRIVSEARCH_ASSIGN_OR_RETURN(auto scorer, scoring::PrivateScorer::create(&art.layout, &art.hint));

  const std::uint64_t matrix_bytes = std::uint64_t{art.matrix.rows} * art.matrix.stride;
  PRIVSEARCH_ASSIGN_OR_RETURN(
      auto core,
      scoring_core(store, man.version_id,
                   std::make_shared<const scoring::ScoringMatrix>(std::move(art.matrix)), o.m));

  const auto queries =
      make_bench_queries(o.docs, o.input_dim, o.queries, gen, ix->projection, store.cols());
  Prng prng = Prng::create();
  const auto clusters_of = scoring::clusters_of_documents(art.layout);
  PrivateRun run;
  for (std::size_t qi = 0; qi < o.queries; ++qi) {
    const std::span<const float> z(queries.projected_flat.data() + qi * store.cols(), store.cols());
    PRIVSEARCH_RETURN_IF_ERROR(measure_query(*ix, art, scorer, *core, clusters_of, o, z,
                                             queries.sources[qi], qi == 0, prng, run));
    if ((qi + 1) % 20 == 0)
      progress(fmt::format("bench private: {} / {} queries", qi + 1, o.queries));
  }
  const auto server = eval::describe(run.server_ms);
  nlohmann::json out;
  out["machine"] = machine_description();
  out["docs"] = o.docs;
  out["m"] = o.m;
  out["k"] = o.k;
  out["private_dim"] = shape.dim;
  out["score_bits"] = shape.log_p;
  out["answer_bits"] = shape.answer_bits;
  out["overlap"] = o.overlap;
  out["fill"] = o.fill;
  out["clusters"] = shape.clusters;
  out["cluster_rows"] = shape.cluster_rows;
  out["columns"] = shape.columns();
  out["matrix_bytes"] = matrix_bytes;
  out["server_ms"] = latency_summary(run.server_ms);
  out["request_bytes"] = run.request_bytes;
  out["response_bytes"] = run.response_bytes;
  out["sizes_constant"] = run.sizes_constant;
  out["hint_bytes"] = scoring::serialize_hint(art.hint).size();
  out["client_ms"] = latency_summary(run.client_ms);
  out["client_encrypt_ms"] = latency_summary(run.encrypt_ms);
  out["client_decode_ms"] = latency_summary(run.decode_ms);
  out["client_mask_ms_offline"] = latency_summary(run.mask_ms);
  out["gbps"] = static_cast<double>(matrix_bytes) / (server.median * 1e6);
  out["queries"] = o.queries;
  out["hit10_private"] = static_cast<double>(run.hit_private) / static_cast<double>(o.queries);
  out["hit10_candidate"] = static_cast<double>(run.hit_candidate) / static_cast<double>(o.queries);
  out["hit10_vs_candidate"] =
      (static_cast<double>(run.hit_private) - static_cast<double>(run.hit_candidate)) /
      static_cast<double>(o.queries);
  // Where the private misses come from: the source's cluster not chosen, or its rank inside.
  out["source_in_clusters"] =
      static_cast<double>(run.source_in_clusters) / static_cast<double>(o.queries);
  out["source_in_candidates"] =
      static_cast<double>(run.source_in_candidates) / static_cast<double>(o.queries);
  if (build_s > 0) out["scoring_build_s"] = build_s;
  if (!o.dataset.empty() && std::filesystem::exists(o.dataset / "corpus.jsonl")) {
    PRIVSEARCH_RETURN_IF_ERROR(add_text_quality(o, progress, out));
  }
  return out;
}

}  // namespace privsearch::tools
