#include "client/core/private_scoring.h"

#include <fmt/format.h>

#include <chrono>

#include "core/elapsed.h"

namespace privsearch::client::core {

AccessPrivateScoring::AccessPrivateScoring(std::unique_ptr<scoring::ScoringLayout> layout,
                                           std::unique_ptr<scoring::ScoringHint> hint,
                                           scoring::PrivateScorer scorer)
    : layout_(std::move(layout)), hint_(std::move(hint)), scorer_(std::move(scorer)) {}

Result<std::unique_ptr<AccessPrivateScoring>> AccessPrivateScoring::create(
    version::PrivateScoringArtifacts artifacts) {
  auto layout = std::make_unique<scoring::ScoringLayout>(std::move(artifacts.layout));
  auto hint = std::make_unique<scoring::ScoringHint>(std::move(artifacts.hint));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto scorer,
                              scoring::PrivateScorer::create(layout.get(), hint.get()));
  return std::unique_ptr<AccessPrivateScoring>(
      new AccessPrivateScoring(std::move(layout), std::move(hint), std::move(scorer)));
}

Result<PrivateQueries> AccessPrivateScoring::encrypt(std::span<const float> query,
                                                     std::span<const std::uint32_t> candidates,
                                                     std::size_t m, Prng& prng) {
  if (m == 0) return invalid_argument_error("clusters (m) must be at least 1");
  PrivateQueries out;
  out.clusters = scorer_.choose_clusters(query, candidates, m);
  auto t0 = std::chrono::steady_clock::now();
  if (scorer_.prepared() < out.clusters.size()) {
    PRIVSEARCH_RETURN_IF_ERROR(scorer_.prepare(out.clusters.size() - scorer_.prepared(), prng));
    out.masks_ms = ms_since(t0);
  }
  t0 = std::chrono::steady_clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(out.pending, scorer_.encrypt(query, out.clusters, prng));
  out.ciphertexts = scoring::pack_queries(out.pending.queries, layout_->query_drop_bits);
  out.encrypt_ms = ms_since(t0);
  return out;
}

Result<std::vector<scoring::ScoredDoc>> AccessPrivateScoring::decode(
    scoring::PendingScore pending, std::string_view answers) const {
  const std::size_t expected = scoring::packed_answer_bytes(
      pending.clusters.size() * layout_->shape.cluster_rows, layout_->shape.answer_bits);
  if (answers.size() != expected) {
    return data_loss_error(
        fmt::format("private scoring answer of {} bytes; this index's answers take {}",
                    answers.size(), expected));
  }
  auto scored = scorer_.decode(std::move(pending), answers);
  if (!scored.ok()) return data_loss_error(scored.status().message());
  return scored;
}

}  // namespace privsearch::client::core
