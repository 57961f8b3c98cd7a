#include "experiments/audit_extraction.h"

#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "core/csprng.h"
#include "core/elapsed.h"
#include "harness/spawned_provider.h"
#include "index/build.h"
#include "index/exact_store.h"
#include "index/manifest.h"

namespace privsearch::tools {
using Clock = std::chrono::steady_clock;

namespace {

// The rows recovered by basis queries e_j against one candidate each (budget disabled).
struct Recovery {
  std::vector<std::vector<double>> rows;
  std::size_t queries = 0, bytes = 0;
  double seconds = 0;
};

Result<Recovery> recover_rows(client::SearchClient& sc, const std::vector<std::uint32_t>& targets,
                              std::size_t d, const client::SearchOptions& so) {
  Recovery r;
  for (const auto target : targets) {
    const auto t0 = Clock::now();
    std::vector<double> row(d);
    for (std::size_t j = 0; j < d; ++j) {
      std::vector<double> e(d, 0.0);
      e[j] = 1.0;
      client::SearchTiming t;
      const std::uint32_t ids[1] = {target};
      PRIVSEARCH_ASSIGN_OR_RETURN(auto s, sc.score_candidates(e, ids, so, &t));
      row[j] = s[0];
      ++r.queries;
      r.bytes += t.request_bytes + t.response_bytes;
    }
    r.seconds += seconds_since(t0);
    r.rows.push_back(std::move(row));
  }
  return r;
}

// How close each recovered row is to the exact one (the exact rows are opened only now).
nlohmann::json score_recovery(const index::ExactStore& store,
                              const std::vector<std::uint32_t>& targets, const Recovery& rec,
                              double& cos_sum) {
  const std::size_t d = store.cols();
  nlohmann::json per = nlohmann::json::array();
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const float* x = store.row(targets[i]);
    double dot = 0, nx = 0, nr = 0, err2 = 0, max_abs = 0, mae = 0;
    for (std::size_t j = 0; j < d; ++j) {
      const double r = rec.rows[i][j];
      dot += r * x[j];
      nx += static_cast<double>(x[j]) * x[j];
      nr += r * r;
      const double e = r - x[j];
      err2 += e * e;
      mae += std::abs(e);
      max_abs = std::max(max_abs, std::abs(e));
    }
    const double cos = dot / std::sqrt(nx * nr);
    cos_sum += cos;
    per.push_back({{"target", targets[i]},
                   {"cosine", cos},
                   {"relative_l2", std::sqrt(err2 / nx)},
                   {"rmse", std::sqrt(err2 / static_cast<double>(d))},
                   {"mae", mae / static_cast<double>(d)},
                   {"max_abs_error", max_abs}});
  }
  return per;
}

// The default budget, one key epoch: basis queries against one target until refused.
Result<nlohmann::json> against_default_budget(client::SearchClient& sc, std::uint32_t target,
                                              std::size_t d, const client::SearchOptions& so,
                                              bool& refused_before_a_row) {
  std::size_t answered = 0;
  bool refused = false;
  std::string refusal;
  for (std::size_t j = 0; j < d; ++j) {
    std::vector<double> e(d, 0.0);
    e[j] = 1.0;
    const std::uint32_t ids[1] = {target};
    auto s = sc.score_candidates(e, ids, so);
    if (!s.ok()) {
      refused = s.status().code() == StatusCode::kResourceExhausted;
      refusal = s.status().to_string();
      if (!refused) return s.status();
      break;
    }
    ++answered;
  }
  refused_before_a_row = refused && answered < d;
  return nlohmann::json{{"answered_before_refusal", answered},
                        {"row_completed", answered == d},
                        {"refusal", refusal}};
}

}  // namespace

Result<nlohmann::json> run_extraction_audit(const index::Collection& c,
                                            const std::filesystem::path& dataset_dir,
                                            const ExtractionOptions& o,
                                            const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& s) {
    if (progress) progress(s);
  };
  say("indexing " + dataset_dir.string() + " for the extraction audit");
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto built, index_collection(dataset_dir, o.work_dir, o.dim));
  const auto& index_dir = built.dir;
  const std::size_t d = built.manifest.dim;
  const std::size_t n = built.manifest.documents;
  if (n != c.corpus.size()) return internal_error("the index does not match the collection");
  Prng pick = Prng::from_seed(Seed{static_cast<std::uint8_t>(o.seed & 0xff)}, o.seed);
  std::vector<std::uint32_t> targets;
  while (targets.size() < std::min(o.targets, n)) {
    const auto t = static_cast<std::uint32_t>(pick.uniform_below(n));
    if (std::find(targets.begin(), targets.end(), t) == targets.end()) targets.push_back(t);
  }
  client::SearchOptions so;
  so.renew_key_epoch = false;  // the attacker uses one key epoch
  nlohmann::json out;
  out["targets"] = targets;
  out["dim"] = d;
  say(fmt::format("extraction with the budget disabled: {} targets x {} basis queries",
                  targets.size(), d));
  Recovery rec;
  {
    PRIVSEARCH_ASSIGN_OR_RETURN(
        const auto provider,
        SpawnedProvider::start({index_dir, o.work_dir, {"--no-pir", "--requests-per-key", "1000000000000"}}));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto sc, connect_search_client(index_dir, *provider));
    PRIVSEARCH_ASSIGN_OR_RETURN(rec, recover_rows(*sc, targets, d, so));
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(
      const auto store, index::ExactStore::open(index_dir / built.manifest.find("exact_store")->file));
  double cos_sum = 0;
  out["budget_disabled"] = {{"per_target", score_recovery(store, targets, rec, cos_sum)},
                            {"queries", rec.queries},
                            {"bytes", rec.bytes},
                            {"seconds", rec.seconds},
                            {"seconds_per_target", rec.seconds / static_cast<double>(targets.size())}};
  out["extraction_cosine"] = cos_sum / static_cast<double>(targets.size());
  say("extraction against the default per-key-id budget (one key epoch)");
  {
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto provider,
                                SpawnedProvider::start({index_dir, o.work_dir, {"--no-pir"}}));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto sc, connect_search_client(index_dir, *provider));
    bool refused = false;
    PRIVSEARCH_ASSIGN_OR_RETURN(out["default_budget"],
                                against_default_budget(*sc, targets[0], d, so, refused));
    out["extraction_refused"] = refused;
  }
  out["security_conclusion"] = {
      {"query_confidentiality_refuted", false},
      {"document_privacy_against_clients_provided", false},
      {"budget_is_cryptographic", false},
      {"note", "a client choosing its queries reads exact rows through the scores; the "
               "per-key-id budget only bounds one key epoch (new keys start a new budget)"}};
  return out;
}

}  // namespace privsearch::tools
