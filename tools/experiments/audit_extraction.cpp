#include "experiments/audit_extraction.h"

#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "core/csprng.h"
#include "index/build.h"
#include "index/exact_store.h"
#include "index/manifest.h"
#include "harness/spawned_provider.h"

namespace privsearch::tools {
namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
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
  const auto& manifest = built.manifest;
  const std::size_t d = manifest.dim;
  const std::size_t n = manifest.documents;
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

  // 1. Budget disabled: the rows come back.
  std::vector<std::vector<double>> recovered;
  std::size_t queries = 0, bytes = 0;
  double total_s = 0;
  {
    say(fmt::format("extraction with the budget disabled: {} targets x {} basis queries",
                    targets.size(), d));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto provider, SpawnedProvider::start({index_dir, o.work_dir, {"--no-pir", "--requests-per-key", "1000000000000"}}));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto sc, connect_search_client(index_dir, *provider));
    for (const auto target : targets) {
      const auto t0 = Clock::now();
      std::vector<double> row(d);
      for (std::size_t j = 0; j < d; ++j) {
        std::vector<double> e(d, 0.0);
        e[j] = 1.0;
        client::SearchTiming t;
        const std::uint32_t ids[1] = {target};
        PRIVSEARCH_ASSIGN_OR_RETURN(auto s, sc->score_candidates(e, ids, so, &t));
        row[j] = s[0];
        ++queries;
        bytes += t.request_bytes + t.response_bytes;
      }
      total_s += seconds_since(t0);
      recovered.push_back(std::move(row));
    }
  }
  // Exact rows are opened only now, to score the recovery.
  PRIVSEARCH_ASSIGN_OR_RETURN(
      const auto store, index::ExactStore::open(index_dir / manifest.find("exact_store")->file));
  nlohmann::json per = nlohmann::json::array();
  double cos_sum = 0;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const float* x = store.row(targets[i]);
    double dot = 0, nx = 0, nr = 0, err2 = 0, max_abs = 0, mae = 0;
    for (std::size_t j = 0; j < d; ++j) {
      const double r = recovered[i][j];
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
  out["budget_disabled"] = {{"per_target", per},
                            {"queries", queries},
                            {"bytes", bytes},
                            {"seconds", total_s},
                            {"seconds_per_target", total_s / static_cast<double>(targets.size())}};
  out["extraction_cosine"] = cos_sum / static_cast<double>(targets.size());

  // 2. The default budget, one key epoch: refused before one row completes.
  {
    say("extraction against the default per-key-id budget (one key epoch)");
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto provider, SpawnedProvider::start({index_dir, o.work_dir, {"--no-pir"}}));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto sc, connect_search_client(index_dir, *provider));
    std::size_t answered = 0;
    bool refused = false;
    std::string refusal;
    for (std::size_t j = 0; j < d; ++j) {
      std::vector<double> e(d, 0.0);
      e[j] = 1.0;
      const std::uint32_t ids[1] = {targets[0]};
      auto s = sc->score_candidates(e, ids, so);
      if (!s.ok()) {
        refused = s.status().code() == StatusCode::kResourceExhausted;
        refusal = s.status().to_string();
        if (!refused) return s.status();
        break;
      }
      ++answered;
    }
    out["default_budget"] = {{"answered_before_refusal", answered},
                             {"row_completed", answered == d},
                             {"refusal", refusal}};
    out["extraction_refused"] = refused && answered < d;
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
