#include "client/core/query_order.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace privsearch::client::core {

Result<std::vector<double>> unit_query(std::span<const double> z, QueryKind kind) {
  double norm = 0;
  for (const double v : z) norm += v * v;
  if (norm == 0) {
    return invalid_argument_error(
        kind == QueryKind::kText
            ? "the query has no known terms: none of its words is in the index's vocabulary, so "
              "there is nothing to search"
            : "the query vector is zero in the index's projected space: nothing to search");
  }
  norm = std::sqrt(norm);
  std::vector<double> out(z.begin(), z.end());
  for (double& v : out) v /= norm;
  return out;
}

Result<std::vector<double>> unit_query(std::span<const float> z, QueryKind kind) {
  const std::vector<double> wide(z.begin(), z.end());
  return unit_query(std::span<const double>(wide), kind);
}

SendOrder SendOrder::make(std::span<const std::uint32_t> candidates, Prng* prng) {
  SendOrder out;
  out.order_.resize(candidates.size());
  std::iota(out.order_.begin(), out.order_.end(), 0);
  if (prng != nullptr) {
    for (std::size_t i = out.order_.size(); i > 1; --i) {
      std::swap(out.order_[i - 1], out.order_[static_cast<std::size_t>(prng->uniform_below(i))]);
    }
  }
  out.sent_.resize(out.order_.size());
  for (std::size_t s = 0; s < out.order_.size(); ++s) out.sent_[s] = candidates[out.order_[s]];
  return out;
}

Result<std::vector<double>> SendOrder::restore(std::span<const double> sent_scores) const {
  if (sent_scores.size() != order_.size()) {
    return data_loss_error(fmt::format("the provider returned {} scores for {} candidates sent",
                                       sent_scores.size(), order_.size()));
  }
  std::vector<double> out(order_.size());
  for (std::size_t s = 0; s < order_.size(); ++s) out[order_[s]] = sent_scores[s];
  return out;
}

Hit make_hit(std::uint64_t doc, double score, const index::DocIds* ids,
             const index::PayloadStore* payloads) {
  Hit h;
  h.doc = doc;
  h.score = score;
  if (ids != nullptr) h.id = std::string(ids->id(doc));
  if (payloads != nullptr) h.title = payloads->title(doc);
  return h;
}

std::vector<std::size_t> rank_by_score(std::span<const double> scores, std::size_t top) {
  std::vector<std::size_t> rank(scores.size());
  std::iota(rank.begin(), rank.end(), 0);
  std::stable_sort(rank.begin(), rank.end(),
                   [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  rank.resize(std::min(top, rank.size()));
  return rank;
}

}  // namespace privsearch::client::core
