#include "experiments/eval_private.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "eval/metrics.h"
#include "experiments/offline_index.h"
#include "index/build.h"
#include "index/encoders/beir.h"
#include "scoring/answer.h"
#include "scoring/client/private_query.h"

namespace privsearch::tools {

nlohmann::json PrivateEvalResult::to_json() const {
  return {{"queries", queries},
          {"m", m},
          {"k", k},
          {"clusters", clusters},
          {"cluster_rows", cluster_rows},
          {"dim", dim},
          {"doc_bits", doc_bits},
          {"query_bits", query_bits},
          {"score_bits", score_bits},
          {"answer_bits", answer_bits},
          {"ndcg10_candidate", ndcg10_candidate},
          {"ndcg10_private", ndcg10_private},
          {"ndcg10_private_minus_candidate", ndcg10_private - ndcg10_candidate},
          {"recall100_candidate", recall100_candidate},
          {"cluster_recall", cluster_recall},
          {"encrypted_checked", encrypted_checked},
          {"encrypted_mismatches", encrypted_mismatches}};
}

Result<std::filesystem::path> ensure_private_eval_index(
    const std::filesystem::path& dataset_dir, const std::string& encoder, std::size_t dim,
    scoring::ScoringBuildOptions scoring, const std::function<void(const std::string&)>& progress) {
  // One cache per collection, scoring options and file format (named by the bits the build will
  // use: the default may change between builds of this tool).
  const auto dir =
      std::filesystem::path("build/eval-private") /
      fmt::format("{}-d{}-p{}-v{}", dataset_dir.filename().string(), scoring.dim,
                  scoring.score_bits != 0 ? scoring.score_bits : scoring::kDefaultScoreBits,
                  scoring::kScoringFormatVersion);
  if (std::filesystem::exists(dir / "manifest.json")) {
    if (progress) progress("reusing " + dir.string() + " (delete it to rebuild)");
    return dir;
  }
  index::BuildOptions o;
  o.collection = dataset_dir;
  o.out = dir;
  o.encoder = encoder;
  o.dim = dim;
  scoring.seed = o.seed;
  o.extra_artifacts = scoring::scoring_artifacts_for_build(scoring);
  PRIVSEARCH_RETURN_IF_ERROR(index::build_index(o, progress).status());
  return dir;
}

namespace {

// The index's scoring artifacts, or built now from its exact rows when it has none.
Result<scoring::ScoringArtifacts> scoring_of(const std::filesystem::path& index_dir,
                                             const index::Manifest& manifest,
                                             const index::ExactStore& store,
                                             const PrivateEvalOptions& o,
                                             const std::function<void(const std::string&)>& say) {
  if (manifest.find(scoring::kLayoutArtifact) != nullptr) return scoring::load_scoring(index_dir);
  index::Matrix x;
  x.rows = store.rows();
  x.cols = store.cols();
  x.data.assign(store.row(0), store.row(0) + x.rows * x.cols);
  return scoring::build_scoring(x, o.scoring, say);
}

// The exact integer scores of every document of `clusters`, as the private search ranks them.
std::vector<scoring::ScoredDoc> plaintext_scores(const scoring::ScoringArtifacts& art,
                                                 std::span<const float> z,
                                                 std::span<const std::uint32_t> clusters) {
  const auto u = scoring::quantize_query(art.layout, z);
  std::vector<scoring::ScoredDoc> scored;
  for (std::uint32_t c : clusters) {
    const auto part = scoring::plaintext_cluster_scores(art.layout, art.matrix, u, c);
    scored.insert(scored.end(), part.begin(), part.end());
  }
  scoring::sort_and_dedupe(scored);
  return scored;
}

// Whether the encrypted path (encrypt, the provider's answer, decode) gives `scored` exactly.
Result<bool> encrypted_matches(scoring::PrivateScorer& scorer, const scoring::ScoringArtifacts& art,
                               std::span<const float> z, std::span<const std::uint32_t> clusters,
                               const std::vector<scoring::ScoredDoc>& scored, Prng& prng) {
  PRIVSEARCH_ASSIGN_OR_RETURN(auto pending, scorer.encrypt(z, clusters, prng));
  const auto answers =
      scoring::answer_private_queries(art.matrix, pending.queries, clusters.size());
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto decoded, scorer.decode(std::move(pending), answers));
  bool same = decoded.size() == scored.size();
  for (std::size_t i = 0; same && i < decoded.size(); ++i) {
    same = decoded[i].doc == scored[i].doc && decoded[i].score == scored[i].score;
  }
  return same;
}

}  // namespace

Result<PrivateEvalResult> run_private_eval(
    const std::filesystem::path& index_dir, const std::filesystem::path& dataset_dir,
    const PrivateEvalOptions& o, const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& s) {
    if (progress) progress(s);
  };
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto ix, OfflineIndex::open(index_dir));
  const auto& manifest = ix->manifest;
  const auto& store = *ix->store;
  if (!ix->encoder) return failed_precondition_error("the index has no text encoder");
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto collection, index::load_collection(dataset_dir));
  if (collection.corpus.size() != store.rows()) {
    return failed_precondition_error(fmt::format("index has {} documents, collection {}",
                                                 store.rows(), collection.corpus.size()));
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto art, scoring_of(index_dir, manifest, store, o, say));
  const auto& shape = art.layout.shape;
  PRIVSEARCH_ASSIGN_OR_RETURN(auto scorer, scoring::PrivateScorer::create(
                                               &art.layout, &art.hint, o.scoring.allow_insecure));
  Prng prng = Prng::create();
  PrivateEvalResult r;
  r.m = o.m;
  r.k = o.k;
  r.clusters = shape.clusters;
  r.cluster_rows = shape.cluster_rows;
  r.dim = shape.dim;
  r.doc_bits = shape.doc_bits;
  r.query_bits = shape.query_bits;
  r.score_bits = shape.log_p;
  r.answer_bits = shape.answer_bits;
  const auto clusters_of = scoring::clusters_of_documents(art.layout);
  double in_clusters = 0, judged_total = 0;
  for (const auto& q : collection.queries) {
    const auto it = collection.qrels.find(q.id);
    if (it == collection.qrels.end()) continue;
    const auto z = ix->projection.project_query(ix->encoder->encode_query(q.text));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto candidates, ix->scanner->search(z, o.k));
    // Candidate mode: exact projected scores of the K candidates.
    std::vector<std::string> ranking;
    for (std::uint32_t doc : exact_rerank(store, z, candidates)) {
      ranking.push_back(collection.corpus[doc].id);
    }
    const auto cm = eval::score_ranking(ranking, it->second);
    r.ndcg10_candidate += cm.ndcg_at_10;
    r.recall100_candidate += cm.recall_at_100;
    // Private mode.
    const auto clusters = scorer.choose_clusters(z, candidates, o.m);
    const auto scored = plaintext_scores(art, z, clusters);
    if (r.encrypted_checked < o.encrypted_queries) {
      PRIVSEARCH_ASSIGN_OR_RETURN(const bool same,
                                  encrypted_matches(scorer, art, z, clusters, scored, prng));
      ++r.encrypted_checked;
      if (!same) ++r.encrypted_mismatches;
    }
    ranking.clear();
    for (std::size_t i = 0; i < scored.size() && i < 100; ++i) {
      ranking.push_back(collection.corpus[scored[i].doc].id);
    }
    r.ndcg10_private += eval::score_ranking(ranking, it->second).ndcg_at_10;
    for (const auto& [doc_id, grade] : it->second) {
      if (grade <= 0) continue;
      const auto d = collection.doc_index.find(doc_id);
      if (d == collection.doc_index.end()) continue;
      judged_total += 1;
      if (scoring::any_chosen(clusters_of[d->second], clusters)) {
        in_clusters += 1;
      }
    }
    ++r.queries;
  }
  if (r.queries > 0) {
    r.ndcg10_candidate /= static_cast<double>(r.queries);
    r.ndcg10_private /= static_cast<double>(r.queries);
    r.recall100_candidate /= static_cast<double>(r.queries);
  }
  r.cluster_recall = judged_total > 0 ? in_clusters / judged_total : 0;
  return r;
}

}  // namespace privsearch::tools
