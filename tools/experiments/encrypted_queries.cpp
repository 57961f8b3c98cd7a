#include "experiments/encrypted_queries.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "eval/metrics.h"

namespace privsearch::tools {

using client::Stage;

Result<EncryptedQueryOutcome> run_encrypted_query(client::SearchClient& client,
                                                  const index::ExactStore& store,
                                                  const index::Collection& c,
                                                  const index::Query& query, std::size_t k,
                                                  std::span<const float> raw_query) {
  const auto judged = c.qrels.find(query.id);
  if (judged == c.qrels.end()) {
    return invalid_argument_error("query " + query.id + " has no judgments");
  }
  client::SearchOptions so;
  so.candidates = k;
  so.top = k;  // every candidate's decrypted score, best first
  PRIVSEARCH_ASSIGN_OR_RETURN(
      const auto res, raw_query.empty() ? client.search(client::Query::text(query.text), so)
                                        : client.search(client::Query::vector(raw_query), so));
  EncryptedQueryOutcome out;
  out.timing = res.timing;

  // Plaintext scores of the same candidates: <unit(z), x> from the exact store.
  const auto z =
      raw_query.empty() ? client.project_text(query.text) : client.project_vector(raw_query);
  double zn = 0;
  for (const float v : z) zn += static_cast<double>(v) * v;
  zn = std::sqrt(zn);
  std::vector<std::pair<double, std::uint32_t>> plain;
  plain.reserve(res.candidates.size());
  for (std::size_t i = 0; i < res.candidates.size(); ++i) {
    const std::uint32_t d = res.candidates[i];
    double s = 0;
    for (std::size_t j = 0; j < store.cols(); ++j) s += z[j] * store.row(d)[j];
    s /= zn;
    plain.emplace_back(s, d);
    const double err = std::abs(res.candidate_scores[i] - s);
    out.abs_errors.push_back(err);
    out.max_abs_error = std::max(out.max_abs_error, err);
  }
  std::stable_sort(plain.begin(), plain.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = 0; i < std::min<std::size_t>(10, res.hits.size()); ++i) {
    out.encrypted_top10.push_back(c.corpus[res.hits[i].doc].id);
  }
  for (std::size_t i = 0; i < std::min<std::size_t>(10, plain.size()); ++i) {
    out.plaintext_top10.push_back(c.corpus[plain[i].second].id);
  }
  out.ndcg10_encrypted = eval::ndcg_at(out.encrypted_top10, judged->second, 10);
  out.ndcg10_plaintext = eval::ndcg_at(out.plaintext_top10, judged->second, 10);
  return out;
}

void EncryptedRunTotals::add(const EncryptedQueryOutcome& q) {
  ++judged_queries;
  ndcg_encrypted.push_back(q.ndcg10_encrypted);
  ndcg_plaintext.push_back(q.ndcg10_plaintext);
  end_to_end_ms.push_back(q.timing.total_ms);
  provider_ms.push_back(q.timing.provider_ms);
  rpc_ms.push_back(q.timing[Stage::kRpc].ms);
  abs_errors.insert(abs_errors.end(), q.abs_errors.begin(), q.abs_errors.end());
  max_abs_error = std::max(max_abs_error, q.max_abs_error);
  same_top10 += q.top10_match() ? 1 : 0;
  request_bytes = q.timing[Stage::kRpc].bytes_sent;
  response_bytes = q.timing[Stage::kRpc].bytes_received;
  key_upload_bytes += q.timing[Stage::kKeyUpload].bytes_sent;
}

void EncryptedRunTotals::add_no_known_terms() {
  ++judged_queries;
  ndcg_encrypted.push_back(0);
  ndcg_plaintext.push_back(0);
}

double EncryptedRunTotals::top10_match_fraction() const {
  // Over the queries that went through the encrypted path (those with known terms).
  return static_cast<double>(same_top10) /
         static_cast<double>(std::max<std::size_t>(1, end_to_end_ms.size()));
}

}  // namespace privsearch::tools
