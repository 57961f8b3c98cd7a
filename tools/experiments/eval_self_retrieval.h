// `privsearch eval --self-retrieval N`: the search paper's scale track (section 4.2) on N
// synthetic vectors (default 1,000,000 x 768, the cached index of `bench e2e`). Each query is a
// noisy copy of a seeded document, q = unit(x + noise g) with g the normalized sum of three
// other random documents (default noise 0.7), whose only relevant answer is that document; 100
// validation and 400 test queries. Stages: exact search on the raw vectors, exact on the projected
// vectors, PQ-only order, PQ candidates reranked in plaintext, and the encrypted rerank through a
// provider process; Hit@1, Hit@10, MRR@10, nDCG@10 and the recall of the source document among the
// K candidates. Limits: this measures retrieval of a perturbed copy, not semantic relevance; the
// synthetic model (low-rank latent + noise) is not a text collection.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "harness/synthetic_index.h"
#include "index/candidates/projection.h"

namespace privsearch::tools {

struct SelfRetrievalOptions {
  std::size_t docs = 1000000;
  std::size_t input_dim = 768, dim = 672, pq_m = 96, k = 100;
  std::size_t validation = 100, test = 400;
  double noise = 0.7;
  std::uint64_t seed = 2026;
  bool encrypted = true;
  std::filesystem::path cache = "build/bench-e2e";
};

// The seeded queries of the track: sources (the first `validation` are validation, the rest
// test) and their raw and projected (first `d` coordinates) vectors.
struct SelfQueries {
  std::vector<std::size_t> sources;
  std::vector<std::vector<float>> raw;
  std::vector<float> raw_flat, projected_flat;
};
SelfQueries make_self_queries(const SelfRetrievalOptions& o, const Synthetic& gen,
                              const index::Projection& proj, std::size_t d);
// A bench's `count` test queries (no validation split) over `docs` synthetic documents of
// `input_dim` coordinates, the track's default noise and seed.
SelfQueries make_bench_queries(std::size_t docs, std::size_t input_dim, std::size_t count,
                               const Synthetic& gen, const index::Projection& proj, std::size_t d);

// Where each query's source document ranked, for one stage and one split: per-query values of
// Hit@1, Hit@10, MRR@10, nDCG@10 (one relevant document) and, for the PQ stages, whether the
// source was among the K candidates.
struct RankFigures {
  std::vector<double> hit1, hit10, mrr10, ndcg10, in_candidates;
  void add(std::size_t rank);  // 1-based; 0 = not retrieved
  nlohmann::json to_json() const;
};

struct SelfRetrievalResult {
  SelfRetrievalOptions options;
  std::size_t dim = 0, pq_m = 0;
  // Stage (exact_raw, exact_projected, pq_only, pq_rerank_plaintext, pq_rerank_encrypted) ->
  // (validation, test).
  std::map<std::string, std::pair<RankFigures, RankFigures>> stages;
  nlohmann::json to_json() const;
};

Result<SelfRetrievalResult> run_self_retrieval(
    const SelfRetrievalOptions& options, const std::function<void(const std::string&)>& progress);

}  // namespace privsearch::tools
