#include "eval_encrypted.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "eval/metrics.h"
#include "index/atomic_file.h"
#include "index/build.h"
#include "index/exact_store.h"
#include "index/manifest.h"
#include "provider_process.h"

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
  ProviderProcess provider;
  const std::string maxk = std::to_string(std::max<std::size_t>(1024, o.k));
  PRIVSEARCH_RETURN_IF_ERROR(start_provider_process(
      index_dir, o.work_dir, {"--no-pir", "--max-candidates", maxk}, provider));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto sc, connect_search_client(index_dir, provider));
  PRIVSEARCH_ASSIGN_OR_RETURN(
      const auto store, index::ExactStore::open(index_dir / manifest.find("exact_store")->file));
  client::SearchOptions so;
  so.candidates = o.k;
  so.top = o.k;  // every candidate's decrypted score
  std::vector<double> ndcg_ckks, ndcg_plain, abs_err, e2e;
  std::size_t same_top10 = 0, judged_queries = 0, sq_count = 0;
  double sq_sum = 0, max_err = 0;
  std::ofstream jsonl;
  if (!o.per_query_jsonl.empty()) jsonl.open(o.per_query_jsonl);
  say(fmt::format("{} queries through the encrypted path (K = {})", c.queries.size(), o.k));
  for (const auto& q : c.queries) {
    auto judged_it = c.qrels.find(q.id);
    if (judged_it == c.qrels.end()) continue;
    ++judged_queries;
    auto r = sc->search(q.text, so);
    if (r.status().code() == StatusCode::kInvalidArgument) {  // no known terms: both rungs fail
      ndcg_ckks.push_back(0);
      ndcg_plain.push_back(0);
      continue;
    }
    if (!r.ok()) return r.status();
    const auto& res = r.value();
    e2e.push_back(res.timing.total_ms);
    // Plaintext scores of the same candidates: <unit(z), x>.
    const auto z = sc->project_text(q.text);
    double zn = 0;
    for (float v : z) zn += static_cast<double>(v) * v;
    zn = std::sqrt(zn);
    std::vector<std::pair<double, std::uint32_t>> plain;
    double q_max = 0;
    for (std::size_t i = 0; i < res.candidates.size(); ++i) {
      const std::uint32_t d = res.candidates[i];
      double s = 0;
      for (std::size_t j = 0; j < store.cols(); ++j) s += z[j] * store.row(d)[j];
      s /= zn;
      plain.push_back({s, d});
      const double err = std::abs(res.candidate_scores[i] - s);
      abs_err.push_back(err);
      q_max = std::max(q_max, err);
      sq_sum += err * err;
      ++sq_count;
    }
    max_err = std::max(max_err, q_max);
    std::stable_sort(plain.begin(), plain.end(),
                     [](const auto& a, const auto& b2) { return a.first > b2.first; });
    std::vector<std::string> enc_ids, plain_ids;
    for (std::size_t i = 0; i < std::min<std::size_t>(10, res.hits.size()); ++i) {
      enc_ids.push_back(c.corpus[res.hits[i].doc].id);
    }
    for (std::size_t i = 0; i < std::min<std::size_t>(10, plain.size()); ++i) {
      plain_ids.push_back(c.corpus[plain[i].second].id);
    }
    const double nc = eval::ndcg_at(enc_ids, judged_it->second, 10);
    const double np = eval::ndcg_at(plain_ids, judged_it->second, 10);
    ndcg_ckks.push_back(nc);
    ndcg_plain.push_back(np);
    const bool match = enc_ids == plain_ids;
    same_top10 += match ? 1 : 0;
    if (jsonl.is_open()) {
      jsonl << nlohmann::json{{"query_id", q.id},        {"ndcg10_ckks", nc},
                              {"ndcg10_plain", np},      {"max_abs_error", q_max},
                              {"top10_order_match", match}, {"end_to_end_ms", res.timing.total_ms}}
                   .dump()
            << "\n";
    }
  }
  if (ndcg_ckks.empty()) return invalid_argument_error("no judged query in the collection");
  const auto diff = eval::paired_bootstrap_difference(ndcg_ckks, ndcg_plain, o.resamples, o.seed);
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0.0 : s / static_cast<double>(v.size());
  };
  std::vector<double> sorted = e2e;
  std::sort(sorted.begin(), sorted.end());
  nlohmann::json j;
  j["queries"] = judged_queries;
  j["k"] = o.k;
  j["transport"] = "provider process, gRPC over TLS 1.3 on 127.0.0.1";
  j["artifact_version"] = manifest.version_id;
  j["ndcg@10_ckks"] = mean(ndcg_ckks);
  j["ndcg@10_plaintext_rerank"] = mean(ndcg_plain);
  j["ckks_minus_plain_ndcg10"] = {{"mean", diff.mean}, {"ci_low", diff.low},
                                  {"ci_high", diff.high}, {"resamples", o.resamples}};
  j["margin"] = o.margin;
  j["decision"] = eval::equivalence_decision(diff, o.margin);
  j["top10_order_match"] =
      static_cast<double>(same_top10) / static_cast<double>(std::max<std::size_t>(1, e2e.size()));
  j["numerical"] = {{"max_abs_error", max_err},
                    {"mean_abs_error", mean(abs_err)},
                    {"rmse", sq_count ? std::sqrt(sq_sum / static_cast<double>(sq_count)) : 0.0},
                    {"scores_compared", sq_count}};
  if (!sorted.empty()) {
    j["end_to_end_ms"] = {{"median", sorted[sorted.size() / 2]},
                          {"p95", sorted[std::min(sorted.size() - 1, sorted.size() * 95 / 100)]}};
  }
  return j;
}

}  // namespace privsearch::tools
