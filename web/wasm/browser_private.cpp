// BrowserClient's access-private search (browser_client.h) through the client core's
// AccessPrivateScoring (client/core/private_scoring.h), the native client's scorer. The K local
// PQ candidates only choose which m clusters to score; the provider multiplies its whole scoring
// matrix by m LWE queries and learns no candidate, no cluster and no score. The LWE masks and
// secrets come from the page's one CSPRNG and stay in this object until the answers are decoded.
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
  PRIVSEARCH_ASSIGN_OR_RETURN(scoring_,
                              client::core::AccessPrivateScoring::create(std::move(artifacts)));
  private_pending_.clear();
  return Status();
}

Result<PreparedPrivate> BrowserClient::prepare_private(const std::string& text, std::size_t k,
                                                       std::size_t clusters) {
  const auto owner = owner_.hold();
  if (!scoring_) return failed_precondition_error("open the access-private artifacts first");
  if (clusters == 0) clusters = scoring::kDefaultClusters;
  k = std::min(k, documents_);
  PreparedPrivate out;
  auto t0 = Clock::now();
  const auto query = project_text(text);
  PRIVSEARCH_RETURN_IF_ERROR(
      client::core::unit_query(std::span<const float>(query), client::core::QueryKind::kText)
          .status());
  out.encode_ms = ms_since(t0);
  t0 = Clock::now();
  std::vector<std::uint32_t> candidates;
  if (k > 0) {
    PRIVSEARCH_ASSIGN_OR_RETURN(candidates,
                                index::scan_top_k(codebook_, segments_, query, k, 1, deleted_));
  }
  out.scan_ms = ms_since(t0);
  PRIVSEARCH_ASSIGN_OR_RETURN(auto queries, scoring_->encrypt(query, candidates, clusters, prng_));
  out.ciphertexts = std::move(queries.ciphertexts);
  out.queries = static_cast<std::uint32_t>(queries.clusters.size());
  out.masks_ms = queries.masks_ms;
  out.encrypt_ms = queries.encrypt_ms;
  out.id = next_id_++;
  if (private_pending_.size() >= kMaxPendingPrivate) {
    private_pending_.erase(private_pending_.begin());  // the oldest
  }
  private_pending_.emplace(out.id, std::move(queries.pending));
  return out;
}

Result<FinishedSearch> BrowserClient::finish_private(std::uint32_t id, const std::string& answers,
                                                     std::size_t top) {
  const auto owner = owner_.hold();
  const auto it = private_pending_.find(id);
  if (it == private_pending_.end() || !scoring_) {
    return failed_precondition_error(fmt::format("no prepared access-private search {}", id));
  }
  scoring::PendingScore pending = std::move(it->second);
  private_pending_.erase(it);
  FinishedSearch out;
  const auto t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto scored, scoring_->decode(std::move(pending), answers));
  out.decrypt_ms = ms_since(t0);
  for (std::size_t i = 0; i < std::min(top, scored.size()); ++i) {
    out.hits.push_back(hit(scored[i].doc, static_cast<double>(scored[i].score)));
  }
  return out;
}

}  // namespace privsearch::web
