#include "experiments/eval_encrypted.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>

#include "ckks/param_sets.h"
#include "eval/metrics.h"
#include "eval/statistics.h"
#include "experiments/encrypted_queries.h"
#include "harness/spawned_provider.h"
#include "index/artifacts/atomic_file.h"
#include "index/artifacts/exact_store.h"
#include "index/artifacts/manifest.h"
#include "index/build.h"
#include "rerank/layout.h"
#include "version/index_version.h"

namespace privsearch::tools {

namespace {

// The provider of the evaluation: TLS on loopback, no PIR, K up to at least 1,024.
Result<std::unique_ptr<SpawnedProvider>> start_eval_provider(const std::filesystem::path& index_dir,
                                                             const EncryptedEvalOptions& o) {
  const std::string maxk = std::to_string(std::max<std::size_t>(1024, o.k));
  std::vector<std::string> args{"--no-pir", "--max-candidates", maxk};
  if (!o.preset.empty()) {
    args.push_back("--preset");
    args.push_back(o.preset);
  }
  return SpawnedProvider::start({index_dir, o.work_dir, args});
}

// Every judged query through the encrypted path and the plaintext rerank, one JSON line each
// into `per_query_jsonl` when given.
Result<EncryptedRunTotals> run_judged_queries(client::SearchClient& sc,
                                              const index::ExactStore& store,
                                              const index::Collection& c,
                                              const EncryptedEvalOptions& o) {
  EncryptedRunTotals totals;
  std::ofstream jsonl;
  if (!o.per_query_jsonl.empty()) jsonl.open(o.per_query_jsonl);
  for (const auto& q : c.queries) {
    if (c.qrels.find(q.id) == c.qrels.end()) continue;
    auto r = run_encrypted_query(sc, store, c, q, o.k);
    if (r.status().code() == StatusCode::kInvalidArgument) {  // no known terms: both rungs fail
      totals.add_no_known_terms();
      continue;
    }
    if (!r.ok()) return r.status();
    totals.add(*r);
    if (jsonl.is_open()) {
      jsonl << nlohmann::json{{"query_id", q.id},
                              {"ndcg10_ckks", r->ndcg10_encrypted},
                              {"ndcg10_plain", r->ndcg10_plaintext},
                              {"max_abs_error", r->max_abs_error},
                              {"top10_order_match", r->top10_match()},
                              {"end_to_end_ms", r->timing.total_ms}}
                   .dump()
            << "\n";
    }
  }
  if (totals.ndcg_encrypted.empty())
    return invalid_argument_error("no judged query in the collection");
  return totals;
}

// The figures of the runs: nDCG@10 of both rungs and their paired bootstrap difference, the
// equivalence decision, the score errors and the end-to-end times.
Result<EncryptedEvalResult> summarize(const EncryptedRunTotals& totals,
                                      const index::Manifest& manifest,
                                      const EncryptedEvalOptions& o) {
  const auto diff = eval::paired_bootstrap_difference(totals.ndcg_encrypted, totals.ndcg_plaintext,
                                                      o.resamples, o.seed);
  double sq_sum = 0;
  for (const double e : totals.abs_errors) sq_sum += e * e;
  EncryptedEvalResult r;
  r.queries = totals.judged_queries;
  r.k = o.k;
  r.artifact_version = manifest.version_id;
  r.preset = o.preset.empty() ? std::string(ckks::kRerankPresetName) : o.preset;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto lit, ckks::preset_literal(r.preset));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto served, ckks::Params::create(lit));
  r.kernel = std::string(rerank::kernel_name(rerank::kernel_for_params(served)));
  r.ndcg10_ckks = eval::describe(totals.ndcg_encrypted).mean;
  r.ndcg10_plaintext_rerank = eval::describe(totals.ndcg_plaintext).mean;
  r.diff_mean = diff.mean;
  r.diff_low = diff.low;
  r.diff_high = diff.high;
  r.resamples = o.resamples;
  r.margin = o.margin;
  r.decision = eval::equivalence_decision(diff, o.margin);
  r.top10_order_match = totals.top10_match_fraction();
  r.max_abs_error = totals.max_abs_error;
  r.mean_abs_error = eval::describe(totals.abs_errors).mean;
  r.scores_compared = totals.abs_errors.size();
  r.rmse = r.scores_compared ? std::sqrt(sq_sum / static_cast<double>(r.scores_compared)) : 0.0;
  if (!totals.end_to_end_ms.empty()) r.end_to_end_ms = eval::describe(totals.end_to_end_ms);
  return r;
}

}  // namespace

Result<EncryptedEvalResult> run_encrypted_eval(
    const index::Collection& c, const std::filesystem::path& dataset_dir,
    const EncryptedEvalOptions& o, const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& s) {
    if (progress) progress(s);
  };
  say("indexing " + dataset_dir.string() + " for the provider under " + o.work_dir.string());
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto built,
                              index_collection(dataset_dir, o.work_dir, o.dim, o.seed));
  say("starting the provider process (TLS, loopback)");
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto provider, start_eval_provider(built.dir, o));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto sc, connect_search_client(built.dir, *provider));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto v,
                              version::IndexVersion::open(built.dir, version::tool_spec()));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto store, v.exact_store());
  say(fmt::format("{} queries through the encrypted path (K = {})", c.queries.size(), o.k));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto totals, run_judged_queries(*sc, store, c, o));
  return summarize(totals, built.manifest, o);
}

nlohmann::json EncryptedEvalResult::to_json() const {
  nlohmann::json j;
  j["queries"] = queries;
  j["k"] = k;
  j["transport"] = "provider process, gRPC over TLS 1.3 on 127.0.0.1";
  j["artifact_version"] = artifact_version;
  j["preset"] = preset;
  j["kernel"] = kernel;
  j["ndcg@10_ckks"] = ndcg10_ckks;
  j["ndcg@10_plaintext_rerank"] = ndcg10_plaintext_rerank;
  j["ckks_minus_plain_ndcg10"] = {
      {"mean", diff_mean}, {"ci_low", diff_low}, {"ci_high", diff_high}, {"resamples", resamples}};
  j["margin"] = margin;
  j["decision"] = decision;
  j["top10_order_match"] = top10_order_match;
  j["numerical"] = {{"max_abs_error", max_abs_error},
                    {"mean_abs_error", mean_abs_error},
                    {"rmse", rmse},
                    {"scores_compared", scores_compared}};
  if (end_to_end_ms) {
    j["end_to_end_ms"] = {{"median", end_to_end_ms->median}, {"p95", end_to_end_ms->p95}};
  }
  return j;
}

}  // namespace privsearch::tools
