// The stages of SearchClient::search: the query made a projected vector, then one of the two
// scorers over the candidates of the candidate source (SearchClient::Impl::candidates).
#include <fmt/format.h>

#include <algorithm>
#include <future>

#include "client/core/query_order.h"
#include "client/search_client_impl.h"

namespace privsearch::client {

Status no_scoring_database() {
  return Status(StatusCode::kFailedPrecondition,
                "this index has no access-private scoring database (rebuild it with one: "
                "scoring::build_scoring, which `privsearch build` runs by default)");
}

namespace {

core::QueryKind kind_of(const Query& query) {
  switch (query.kind()) {
    case Query::Kind::kText:
      return core::QueryKind::kText;
    case Query::Kind::kVector:
      return core::QueryKind::kVector;
    default:
      return core::QueryKind::kProjected;
  }
}

Status wrong_dimension(const char* what, std::size_t got, std::size_t want) {
  return Status(StatusCode::kInvalidArgument,
                fmt::format("{} of dimension {}; the index expects {}", what, got, want));
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
    PRIVSEARCH_ASSIGN_OR_RETURN(z.unit,
                                core::unit_query(std::span<const double>(p), kind_of(query)));
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
  PRIVSEARCH_ASSIGN_OR_RETURN(z.unit,
                              core::unit_query(std::span<const float>(z.scan), kind_of(query)));
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
  const auto order = core::SendOrder::make(out.candidates, options.permute ? &prng : nullptr);
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto sent_scores,
                              score(z.unit, order.sent(), options, t, std::move(encrypted)));
  PRIVSEARCH_ASSIGN_OR_RETURN(out.candidate_scores, order.restore(sent_scores));
  for (const std::size_t i : core::rank_by_score(out.candidate_scores, options.top)) {
    out.hits.push_back(hit(out.candidates[i], out.candidate_scores[i]));
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
  if (!scoring) return no_scoring_database();
  PRIVSEARCH_RETURN_IF_ERROR(check_private_options(options, max_private_queries));
  auto& t = out.timing;
  const std::size_t k = std::min<std::size_t>(options.candidates, manifest.documents);
  if (k > 0) {
    PRIVSEARCH_ASSIGN_OR_RETURN(out.candidates, candidates(z.scan, k, options.nprobe, out));
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(auto queries,
                              scoring->encrypt(z.scan, out.candidates, options.clusters, prng));
  out.private_clusters = queries.clusters;
  t[Stage::kMasks].ms = queries.masks_ms;
  t[Stage::kEncrypt].ms = queries.encrypt_ms;
  v1::PrivateScoreRequest request;
  request.set_artifact_version(manifest.version_id);
  request.set_queries(static_cast<std::uint32_t>(queries.clusters.size()));
  request.set_ciphertexts(std::move(queries.ciphertexts));
  t[Stage::kRpc].bytes_sent = request.ByteSizeLong();
  auto t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto response, transport->private_score(request));
  t[Stage::kRpc].ms = ms_since(t0);
  if (response.has_error()) return provider_refusal("the private scoring", response.error());
  t[Stage::kRpc].bytes_received = response.ByteSizeLong();
  t.provider_ms = response.provider_ms();
  t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto scored,
                              scoring->decode(std::move(queries.pending), response.answers()));
  t[Stage::kDecrypt].ms = ms_since(t0);
  for (std::size_t i = 0; i < std::min(options.top, scored.size()); ++i) {
    out.hits.push_back(hit(scored[i].doc, static_cast<double>(scored[i].score)));
  }
  return Status();
}

}  // namespace privsearch::client
