#include "experiments/audit_extraction.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <fstream>

#include "core/csprng.h"
#include "core/elapsed.h"
#include "harness/spawned_provider.h"
#include "index/artifacts/exact_store.h"
#include "index/artifacts/manifest.h"
#include "index/build.h"
#include "protocol/identities.h"
#include "version/index_version.h"

namespace privsearch::tools {

using client::Stage;
using Clock = std::chrono::steady_clock;

namespace {

// The encrypted scores <unit(e), x_id> of chosen candidates, in their order, through the one
// search entry (what any client can send; the attack this audit measures).
Result<std::vector<double>> scores_of(client::SearchClient& sc, std::span<const double> e,
                                      std::span<const std::uint32_t> ids, client::SearchOptions so,
                                      client::SearchTiming* timing = nullptr) {
  so.candidate_ids.assign(ids.begin(), ids.end());
  so.permute = false;
  PRIVSEARCH_ASSIGN_OR_RETURN(auto r, sc.search(client::Query::projected(e), so));
  if (timing != nullptr) *timing = r.timing;
  return r.candidate_scores;
}

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
      PRIVSEARCH_ASSIGN_OR_RETURN(auto s, scores_of(sc, e, ids, so, &t));
      row[j] = s[0];
      ++r.queries;
      r.bytes += t[Stage::kRpc].bytes_sent + t[Stage::kRpc].bytes_received;
    }
    r.seconds += seconds_since(t0);
    r.rows.push_back(std::move(row));
  }
  return r;
}

// How close each recovered row is to the exact one (the exact rows are opened only now).
std::vector<RowRecovery> score_recovery(const index::ExactStore& store,
                                        const std::vector<std::uint32_t>& targets,
                                        const Recovery& rec) {
  const std::size_t d = store.cols();
  std::vector<RowRecovery> per;
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
    per.push_back({targets[i], dot / std::sqrt(nx * nr), std::sqrt(err2 / nx),
                   std::sqrt(err2 / static_cast<double>(d)), mae / static_cast<double>(d),
                   max_abs});
  }
  return per;
}

// The default budget, one key epoch, attacked at K = max: basis queries naming `k` candidates
// (the target and the next k - 1 documents) until refused; each answered request gives one
// coordinate of k rows, so the epoch's yield is answered x k exact scores.
Status against_default_budget(client::SearchClient& sc, std::uint32_t target, std::size_t k,
                              std::size_t n, std::size_t d, const client::SearchOptions& so,
                              ExtractionResult& out) {
  std::size_t answered = 0;
  bool refused = false;
  std::string refusal;
  std::vector<std::uint32_t> ids(std::min(k, n));
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ids[i] = static_cast<std::uint32_t>((target + i) % n);
  }
  out.k_max = ids.size();
  for (std::size_t j = 0; j < d; ++j) {
    std::vector<double> e(d, 0.0);
    e[j] = 1.0;
    auto s = scores_of(sc, e, ids, so);
    if (!s.ok()) {
      refused = s.status().code() == StatusCode::kResourceExhausted;
      refusal = s.status().to_string();
      if (!refused) return s.status();
      break;
    }
    ++answered;
  }
  out.answered_before_refusal = answered;
  out.scores_before_refusal = answered * ids.size();
  out.row_completed = answered == d;
  out.refusal = refusal;
  out.extraction_refused = refused && answered < d;
  return Status();
}

// One row through basis queries while the client renews its key epoch whenever a budget is
// spent, as any client can: without identities only the key-upload rate bounds it; with an
// identity budget the identity's count is what runs out.
Result<RotationCost> row_with_key_rotation(client::SearchClient& sc, std::uint32_t target,
                                           std::size_t d) {
  client::SearchOptions so;
  so.renew_key_epoch = true;
  RotationCost c;
  const auto t0 = Clock::now();
  for (std::size_t j = 0; j < d; ++j) {
    std::vector<double> e(d, 0.0);
    e[j] = 1.0;
    const std::uint32_t ids[1] = {target};
    client::SearchTiming t;
    auto s = scores_of(sc, e, ids, so, &t);
    c.key_upload_bytes += t[Stage::kKeyUpload].bytes_sent;
    c.key_epochs += t[Stage::kKeyUpload].bytes_sent > 0 ? 1 : 0;
    if (!s.ok()) {
      if (s.status().code() != StatusCode::kResourceExhausted) return s.status();
      c.refusal = s.status().to_string();
      break;
    }
    ++c.answered;
    c.bytes += t[Stage::kRpc].bytes_sent + t[Stage::kRpc].bytes_received;
  }
  c.seconds = seconds_since(t0);
  c.row_completed = c.answered == d;
  return c;
}

}  // namespace

Result<ExtractionResult> run_extraction_audit(
    const index::Collection& c, const std::filesystem::path& dataset_dir,
    const ExtractionOptions& o, const std::function<void(const std::string&)>& progress) {
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
  ExtractionResult out;
  out.targets = targets;
  out.dim = d;
  say(fmt::format("extraction with the budget disabled: {} targets x {} basis queries",
                  targets.size(), d));
  Recovery rec;
  {
    PRIVSEARCH_ASSIGN_OR_RETURN(
        const auto provider,
        SpawnedProvider::start(
            {index_dir, o.work_dir, {"--no-pir", "--scores-per-key", "1000000000000"}}));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto sc, connect_search_client(index_dir, *provider));
    PRIVSEARCH_ASSIGN_OR_RETURN(rec, recover_rows(*sc, targets, d, so));
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto v,
                              version::IndexVersion::open(index_dir, version::tool_spec()));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto store, v.exact_store());
  out.per_target = score_recovery(store, targets, rec);
  out.queries = rec.queries;
  out.bytes = rec.bytes;
  out.seconds = rec.seconds;
  double cos_sum = 0;
  for (const auto& r : out.per_target) cos_sum += r.cosine;
  out.extraction_cosine = cos_sum / static_cast<double>(targets.size());
  say("extraction against the default per-key-id score budget (one key epoch, K = max)");
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto provider,
                              SpawnedProvider::start({index_dir, o.work_dir, {"--no-pir"}}));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto sc, connect_search_client(index_dir, *provider));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto info, sc->transport().server_info());
  PRIVSEARCH_RETURN_IF_ERROR(
      against_default_budget(*sc, targets[0], info.limits().max_candidates(), n, d, so, out));
  // The rate limit's bound: uploads a minute x scores per key id, in rows of d' coordinates.
  out.rows_per_minute_bound_anonymous = info.limits().key_uploads_per_minute() *
                                        static_cast<double>(info.limits().scores_per_key_id()) /
                                        static_cast<double>(d);
  say("extraction with key rotation, anonymous (default limits)");
  PRIVSEARCH_ASSIGN_OR_RETURN(out.rotation_anonymous, row_with_key_rotation(*sc, targets[0], d));
  say("extraction with key rotation under an identity budget of 512");
  {
    const std::string token = protocol::new_token();
    const auto tokens = o.work_dir / "extraction.tokens";
    std::ofstream(tokens) << protocol::token_line("extractor", token) << "\n";
    PRIVSEARCH_ASSIGN_OR_RETURN(
        const auto guarded, SpawnedProvider::start({index_dir,
                                                    o.work_dir / "identity",
                                                    {"--no-pir", "--auth-tokens", tokens.string(),
                                                     "--scores-per-identity", "512"}}));
    auto co = guarded->connect_options();
    co.bearer_token = token;
    PRIVSEARCH_ASSIGN_OR_RETURN(auto transport, client::ProviderClient::connect(co));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto isc,
                                client::SearchClient::open(index_dir, std::move(transport)));
    PRIVSEARCH_ASSIGN_OR_RETURN(out.rotation_identity, row_with_key_rotation(*isc, targets[0], d));
  }
  return out;
}

nlohmann::json ExtractionResult::to_json() const {
  nlohmann::json out;
  out["targets"] = targets;
  out["dim"] = dim;
  nlohmann::json per = nlohmann::json::array();
  for (const auto& r : per_target) {
    per.push_back({{"target", r.target},
                   {"cosine", r.cosine},
                   {"relative_l2", r.relative_l2},
                   {"rmse", r.rmse},
                   {"mae", r.mae},
                   {"max_abs_error", r.max_abs_error}});
  }
  out["budget_disabled"] = {{"per_target", per},
                            {"queries", queries},
                            {"bytes", bytes},
                            {"seconds", seconds},
                            {"seconds_per_target", seconds / static_cast<double>(targets.size())}};
  out["extraction_cosine"] = extraction_cosine;
  out["default_budget"] = {{"k", k_max},
                           {"answered_before_refusal", answered_before_refusal},
                           {"scores_before_refusal", scores_before_refusal},
                           {"row_completed", row_completed},
                           {"refusal", refusal}};
  out["extraction_refused"] = extraction_refused;
  auto rotation = [](const RotationCost& c) {
    nlohmann::json j = {{"answered", c.answered},
                        {"row_completed", c.row_completed},
                        {"key_epochs", c.key_epochs},
                        {"key_upload_bytes", c.key_upload_bytes},
                        {"request_response_bytes", c.bytes},
                        {"seconds", c.seconds}};
    if (!c.refusal.empty()) j["refusal"] = c.refusal;
    return j;
  };
  out["key_rotation"] = {{"anonymous", rotation(rotation_anonymous)},
                         {"rows_per_minute_bound_anonymous", rows_per_minute_bound_anonymous},
                         {"identity_budget_512", rotation(rotation_identity)}};
  out["security_conclusion"] = {
      {"query_confidentiality_refuted", false},
      {"document_privacy_against_clients_provided", false},
      {"budget_is_cryptographic", false},
      {"note",
       "a client choosing its queries reads exact rows through the scores; the per-key-id "
       "budget bounds one key epoch (new keys start a new budget, so anonymous extraction is "
       "bounded by the key-upload rate); an identity budget bounds all of a client's epochs"}};
  return out;
}

}  // namespace privsearch::tools
