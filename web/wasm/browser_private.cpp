// BrowserClient's access-private search (browser_client.h): the native client's steps
// (client/search_client_scoring.cpp) without the transport. The K local PQ candidates only choose
// which m clusters to score; the provider multiplies its whole scoring matrix by m LWE queries
// and learns no candidate, no cluster and no score. The LWE masks and secrets come from the
// page's one CSPRNG and stay in this object until the answers are decoded.
#include <fmt/format.h>

#include <chrono>

#include "browser_client.h"
#include "core/elapsed.h"
#include "index/candidates/pq_scan.h"
#include "version/index_version.h"

namespace privsearch::web {
namespace {

using Clock = std::chrono::steady_clock;

// At most this many access-private searches prepared and not finished.
constexpr std::size_t kMaxPendingPrivate = 4;

}  // namespace

Status BrowserClient::open_private(const std::string& dir) {
  const auto owner = owner_.hold();
  version::OpenSpec spec;
  spec.role = version::Role::kClient;
  spec.candidates = version::CandidateIndex::kFlat;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto version, version::IndexVersion::open(dir, spec));
  if (version.version_id() != version_id_) {
    return failed_precondition_error("the access-private artifacts are of another index version");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(auto artifacts, version.private_scoring());
  auto layout = std::make_unique<scoring::ScoringLayout>(std::move(artifacts.layout));
  auto hint = std::make_unique<scoring::ScoringHint>(std::move(artifacts.hint));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto scorer,
                              scoring::PrivateScorer::create(layout.get(), hint.get()));
  scorer_.reset();
  private_pending_.clear();
  scoring_layout_ = std::move(layout);
  scoring_hint_ = std::move(hint);
  scorer_.emplace(std::move(scorer));
  return Status();
}

Result<PreparedPrivate> BrowserClient::prepare_private(const std::string& text, std::size_t k,
                                                       std::size_t clusters) {
  const auto owner = owner_.hold();
  if (!scorer_) return failed_precondition_error("open the access-private artifacts first");
  if (clusters == 0) clusters = scoring::kDefaultClusters;
  k = std::min(k, documents_);
  PreparedPrivate out;
  auto t0 = Clock::now();
  const auto query = project_text(text);
  if (std::all_of(query.begin(), query.end(), [](float v) { return v == 0; })) {
    return invalid_argument_error("the query has no known terms");
  }
  out.encode_ms = ms_since(t0);
  t0 = Clock::now();
  std::vector<std::uint32_t> candidates;
  if (k > 0) {
    PRIVSEARCH_ASSIGN_OR_RETURN(candidates,
                                index::scan_top_k(codebook_, segments_, query, k, 1, deleted_));
  }
  const auto chosen = scorer_->choose_clusters(query, candidates, clusters);
  out.scan_ms = ms_since(t0);
  t0 = Clock::now();
  if (scorer_->prepared() < chosen.size()) {
    PRIVSEARCH_RETURN_IF_ERROR(scorer_->prepare(chosen.size() - scorer_->prepared(), prng_));
  }
  out.masks_ms = ms_since(t0);
  t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(auto pending, scorer_->encrypt(query, chosen, prng_));
  out.ciphertexts = scoring::pack_queries(pending.queries, scoring_layout_->query_drop_bits);
  out.queries = static_cast<std::uint32_t>(chosen.size());
  out.encrypt_ms = ms_since(t0);
  out.id = next_id_++;
  if (private_pending_.size() >= kMaxPendingPrivate) {
    private_pending_.erase(private_pending_.begin());  // the oldest
  }
  private_pending_.emplace(out.id, std::move(pending));
  return out;
}

Result<FinishedSearch> BrowserClient::finish_private(std::uint32_t id, const std::string& answers,
                                                     std::size_t top) {
  const auto owner = owner_.hold();
  const auto it = private_pending_.find(id);
  if (it == private_pending_.end() || !scorer_) {
    return failed_precondition_error(fmt::format("no prepared access-private search {}", id));
  }
  scoring::PendingScore pending = std::move(it->second);
  private_pending_.erase(it);
  FinishedSearch out;
  const auto t0 = Clock::now();
  const auto& layout = *scoring_layout_;
  const std::size_t expected = scoring::packed_answer_bytes(
      pending.clusters.size() * layout.shape.cluster_rows, layout.shape.answer_bits);
  if (answers.size() != expected) {
    return data_loss_error(
        fmt::format("private scoring answer of {} bytes; this index's answers take {}",
                    answers.size(), expected));
  }
  auto scored = scorer_->decode(std::move(pending), answers);
  if (!scored.ok()) return data_loss_error(scored.status().message());
  out.decrypt_ms = ms_since(t0);
  for (std::size_t i = 0; i < std::min(top, scored->size()); ++i) {
    out.hits.push_back(hit((*scored)[i].doc, static_cast<double>((*scored)[i].score)));
  }
  return out;
}

}  // namespace privsearch::web
