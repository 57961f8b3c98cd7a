// The stages of SearchClient::search: the query made a projected vector, then one of the two
// scorers over the candidates of the candidate source (SearchClient::Impl::candidates).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <future>
#include <numeric>

#include "client/search_client_impl.h"

namespace privsearch::client {

Status no_scoring_database() {
  return Status(StatusCode::kFailedPrecondition,
                "this index has no access-private scoring database (rebuild it with one: "
                "scoring::build_scoring, which `privsearch build` runs by default)");
}

namespace {

Status wrong_dimension(const char* what, std::size_t got, std::size_t want) {
  return Status(StatusCode::kInvalidArgument,
                fmt::format("{} of dimension {}; the index expects {}", what, got, want));
}

// z / |z|; kInvalidArgument for the zero vector, named after what the query was.
Result<std::vector<double>> unit(std::span<const double> z, Query::Kind kind) {
  double norm = 0;
  for (const double v : z) norm += v * v;
  if (norm == 0) {
    return Status(StatusCode::kInvalidArgument,
                  kind == Query::Kind::kText
                      ? "the query has no known terms: none of its words is in the index's "
                        "vocabulary, so there is nothing to search"
                      : "the query vector is zero in the index's projected space: nothing to "
                        "search");
  }
  norm = std::sqrt(norm);
  std::vector<double> out(z.begin(), z.end());
  for (double& v : out) v /= norm;
  return out;
}

}  // namespace

Result<ProjectedQuery> SearchClient::Impl::project(const Query& query, SearchTiming& t) const {
  ProjectedQuery z;
  if (query.kind() == Query::Kind::kProjected) {
    const auto& p = query.as_projected();
    if (p.size() != projection.output_dim) {
      return wrong_dimension("projected query", p.size(), projection.output_dim);
    }
    z.scan.assign(p.begin(), p.end());
    PRIVSEARCH_ASSIGN_OR_RETURN(z.unit, unit(p, query.kind()));
    return z;
  }
  std::vector<float> raw;
  if (query.kind() == Query::Kind::kText) {
    if (encoder == nullptr) {
      return Status(StatusCode::kFailedPrecondition,
                    "this index was built from external vectors: search with a query vector");
    }
    const auto t0 = Clock::now();
    raw = encoder->encode_query(query.as_text());
    t[Stage::kEncode].ms = ms_since(t0);
  }
  const auto& v = query.kind() == Query::Kind::kText ? raw : query.as_vector();
  if (v.size() != projection.input_dim) {
    return wrong_dimension("query vector", v.size(), projection.input_dim);
  }
  z.scan = projection.project_query(v);
  const std::vector<double> wide(z.scan.begin(), z.scan.end());
  PRIVSEARCH_ASSIGN_OR_RETURN(z.unit, unit(wide, query.kind()));
  return z;
}

// The CKKS rerank: K candidates (the candidate source's, or the caller's IDs), sent in a random
// order, their encrypted scores decrypted here and ranked.
Status SearchClient::Impl::rerank(const ProjectedQuery& z, const SearchOptions& options,
                                  SearchResult& out) {
  auto& t = out.timing;
  const bool chosen = !options.candidate_ids.empty();
  const std::size_t k = chosen ? options.candidate_ids.size()
                               : std::min<std::size_t>(options.candidates, manifest.documents);
  if (k == 0) return Status(StatusCode::kInvalidArgument, "candidates (K) must be at least 1");
  // The query's ciphertext depends only on z and K: when K's keys are uploaded it is made on a
  // second thread while the candidates are fetched and scanned (the session is not used by this
  // thread meanwhile). Fewer candidates than K (a tiny collection) discard it.
  std::future<std::pair<Result<EncryptedQuery>, double>> early;
  if (session->key_id(k)) {
    early = std::async(std::launch::async, [this, &z, k] {
      const auto t0 = Clock::now();
      auto e = session->encrypt_query(z.unit, k);
      return std::make_pair(std::move(e), ms_since(t0));
    });
  }
  auto found = chosen ? Result<std::vector<std::uint32_t>>(options.candidate_ids)
                      : candidates(z.scan, k, options.nprobe, out);
  std::optional<EncryptedQuery> encrypted;
  if (early.valid()) {
    auto [e, ms] = early.get();
    if (e.ok()) {
      encrypted = std::move(e).value();
      t[Stage::kEncrypt].ms = ms;
    }
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(out.candidates, std::move(found));

  // The order sent to the provider: a uniformly random permutation (CSPRNG) unless disabled.
  std::vector<std::size_t> order(out.candidates.size());
  std::iota(order.begin(), order.end(), 0);
  if (options.permute) {
    for (std::size_t i = order.size(); i > 1; --i) {
      const auto j = static_cast<std::size_t>(prng.uniform_below(i));
      std::swap(order[i - 1], order[j]);
    }
  }
  std::vector<std::uint64_t> sent(order.size());
  for (std::size_t s = 0; s < order.size(); ++s) sent[s] = out.candidates[order[s]];
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto sent_scores,
                              score(z.unit, sent, options, t, std::move(encrypted)));
  out.candidate_scores.assign(out.candidates.size(), 0.0);
  for (std::size_t s = 0; s < order.size(); ++s) out.candidate_scores[order[s]] = sent_scores[s];

  std::vector<std::size_t> rank(out.candidates.size());
  std::iota(rank.begin(), rank.end(), 0);
  std::stable_sort(rank.begin(), rank.end(), [&](std::size_t a, std::size_t b) {
    return out.candidate_scores[a] > out.candidate_scores[b];
  });
  for (std::size_t i = 0; i < std::min(options.top, rank.size()); ++i) {
    out.hits.push_back(hit(out.candidates[rank[i]], out.candidate_scores[rank[i]]));
  }
  return Status();
}

namespace {

Status check_private_options(const SearchOptions& options, std::uint32_t max_private_queries) {
  if (!options.candidate_ids.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  "access-private scoring picks its own clusters: chosen candidate IDs are for "
                  "the rerank");
  }
  if (options.clusters == 0) {
    return Status(StatusCode::kInvalidArgument, "clusters (m) must be at least 1");
  }
  if (max_private_queries != 0 && options.clusters > max_private_queries) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("clusters = {}: the provider scores at most {} clusters per request",
                              options.clusters, max_private_queries));
  }
  return Status();
}

}  // namespace

// Access-private LWE scoring: the local candidates choose m clusters, whose every document the
// provider scores under encryption; the scores are decoded here and ranked.
Status SearchClient::Impl::private_score(const ProjectedQuery& z, const SearchOptions& options,
                                         SearchResult& out) {
  if (!scorer) return no_scoring_database();
  PRIVSEARCH_RETURN_IF_ERROR(check_private_options(options, max_private_queries));
  const auto& layout = *scoring_layout;
  auto& t = out.timing;
  const std::size_t k = std::min<std::size_t>(options.candidates, manifest.documents);
  if (k > 0) {
    PRIVSEARCH_ASSIGN_OR_RETURN(out.candidates, candidates(z.scan, k, options.nprobe, out));
  }
  out.private_clusters = scorer->choose_clusters(z.scan, out.candidates, options.clusters);
  auto t0 = Clock::now();
  if (scorer->prepared() < out.private_clusters.size()) {
    PRIVSEARCH_RETURN_IF_ERROR(
        scorer->prepare(out.private_clusters.size() - scorer->prepared(), prng));
    t[Stage::kMasks].ms = ms_since(t0);
  }
  t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(auto pending, scorer->encrypt(z.scan, out.private_clusters, prng));
  v1::PrivateScoreRequest request;
  request.set_artifact_version(manifest.version_id);
  request.set_queries(static_cast<std::uint32_t>(out.private_clusters.size()));
  request.set_ciphertexts(scoring::pack_queries(pending.queries, layout.query_drop_bits));
  t[Stage::kEncrypt].ms = ms_since(t0);
  t[Stage::kRpc].bytes_sent = request.ByteSizeLong();
  t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto response, transport->private_score(request));
  t[Stage::kRpc].ms = ms_since(t0);
  if (response.has_error()) return provider_refusal("the private scoring", response.error());
  t[Stage::kRpc].bytes_received = response.ByteSizeLong();
  t.provider_ms = response.provider_ms();
  t0 = Clock::now();
  const std::size_t expected = scoring::packed_answer_bytes(
      out.private_clusters.size() * layout.shape.cluster_rows, layout.shape.answer_bits);
  if (response.answers().size() != expected) {
    return Status(StatusCode::kDataLoss,
                  fmt::format("private scoring answer of {} bytes; this index's answers take {}",
                              response.answers().size(), expected));
  }
  auto scored = scorer->decode(std::move(pending), response.answers());
  if (!scored.ok()) return Status(StatusCode::kDataLoss, scored.status().message());
  t[Stage::kDecrypt].ms = ms_since(t0);
  for (std::size_t i = 0; i < std::min(options.top, scored->size()); ++i) {
    out.hits.push_back(hit((*scored)[i].doc, static_cast<double>((*scored)[i].score)));
  }
  return Status();
}

}  // namespace privsearch::client
