#include "experiments/eval_encrypted.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "eval/metrics.h"
#include "eval/statistics.h"
#include "experiments/encrypted_queries.h"
#include "index/atomic_file.h"
#include "index/build.h"
#include "index/exact_store.h"
#include "index/manifest.h"
#include "harness/spawned_provider.h"

namespace privsearch::tools {

Result<nlohmann::json> run_encrypted_eval(const index::Collection& c,
                                          const std::filesystem::path& dataset_dir,
                                          const EncryptedEvalOptions& o,
                                          const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& s) {
    if (progress) progress(s);
  };
  say("indexing " + dataset_dir.string() + " for the provider under " + o.work_dir.string());
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto built, index_collection(dataset_dir, o.work_dir, o.dim, o.seed));
  const auto& index_dir = built.dir;
  const auto& manifest = built.manifest;
  say("starting the provider process (TLS, loopback)");
  const std::string maxk = std::to_string(std::max<std::size_t>(1024, o.k));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto provider, SpawnedProvider::start({index_dir, o.work_dir, {"--no-pir", "--max-candidates", maxk}}));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto sc, connect_search_client(index_dir, *provider));
  PRIVSEARCH_ASSIGN_OR_RETURN(
      const auto store, index::ExactStore::open(index_dir / manifest.find("exact_store")->file));
  EncryptedRunTotals totals;
  std::ofstream jsonl;
  if (!o.per_query_jsonl.empty()) jsonl.open(o.per_query_jsonl);
  say(fmt::format("{} queries through the encrypted path (K = {})", c.queries.size(), o.k));
  for (const auto& q : c.queries) {
    if (c.qrels.find(q.id) == c.qrels.end()) continue;
    auto r = run_encrypted_query(*sc, store, c, q, o.k);
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
  if (totals.ndcg_encrypted.empty()) return invalid_argument_error("no judged query in the collection");
  const auto diff = eval::paired_bootstrap_difference(totals.ndcg_encrypted,
                                                      totals.ndcg_plaintext, o.resamples, o.seed);
  const auto err = eval::describe(totals.abs_errors);
  double sq_sum = 0;
  for (const double e : totals.abs_errors) sq_sum += e * e;
  const std::size_t sq_count = totals.abs_errors.size();
  nlohmann::json j;
  j["queries"] = totals.judged_queries;
  j["k"] = o.k;
  j["transport"] = "provider process, gRPC over TLS 1.3 on 127.0.0.1";
  j["artifact_version"] = manifest.version_id;
  j["ndcg@10_ckks"] = eval::describe(totals.ndcg_encrypted).mean;
  j["ndcg@10_plaintext_rerank"] = eval::describe(totals.ndcg_plaintext).mean;
  j["ckks_minus_plain_ndcg10"] = {{"mean", diff.mean}, {"ci_low", diff.low},
                                  {"ci_high", diff.high}, {"resamples", o.resamples}};
  j["margin"] = o.margin;
  j["decision"] = eval::equivalence_decision(diff, o.margin);
  j["top10_order_match"] = totals.top10_match_fraction();
  j["numerical"] = {{"max_abs_error", totals.max_abs_error},
                    {"mean_abs_error", err.mean},
                    {"rmse", sq_count ? std::sqrt(sq_sum / static_cast<double>(sq_count)) : 0.0},
                    {"scores_compared", sq_count}};
  if (!totals.end_to_end_ms.empty()) {
    const auto e2e = eval::describe(totals.end_to_end_ms);
    j["end_to_end_ms"] = {{"median", e2e.median}, {"p95", e2e.p95}};
  }
  return j;
}

}  // namespace privsearch::tools
