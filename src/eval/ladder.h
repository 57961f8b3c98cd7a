// The quality ladder of the search paper (section 4.1) on a BEIR collection with the built-in
// lexical encoder: for every judged query,
//   exact_raw        exact inner-product search over the encoder's vectors,
//   exact_projected  exact search over the SVD-projected vectors (x = (d - mu)V, z = qV),
//   pq_only          the order of the PQ scan (the public artifact alone),
//   pq_rerank        the top-K PQ candidates reranked by exact projected scores (what the
//                    encrypted rerank computes, here in plaintext),
// with nDCG@10, MRR@10, Recall@10/100 and Hit@1/10 per query, means with seeded percentile
// bootstrap intervals, and the paired difference of pq_rerank against exact_projected.
// The encrypted rerank through a provider process joins this ladder with the service.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/status.h"
#include "eval/metrics.h"
#include "index/encoders/beir.h"

namespace privsearch::eval {

struct LadderOptions {
  std::size_t dim = 672;          // d' (capped at the encoder's dimension)
  std::size_t pq_m = 0;           // 0 = d'/8 rounded to a divisor
  std::size_t k = 100;            // PQ candidates reranked
  std::size_t resamples = 10000;  // bootstrap
  std::uint64_t seed = 1;
  // "lexical" (the built-in default), "glove-idf" or "glove-sif" (word vectors from
  // `word_vectors`, default index::default_word_vectors_path()), or "lexical+glove-sif:W"
  // (both concatenated, the GloVe part weighted so scores add W times its cosine).
  std::string encoder = "lexical";
  std::filesystem::path word_vectors;
};

struct MethodResult {
  std::string name;
  std::vector<QueryMetrics> per_query;
  Interval ndcg_at_10, mrr_at_10, recall_at_10, recall_at_100;
};

struct LadderResult {
  std::string encoder_id;
  std::size_t dim = 0, k = 0, pq_m = 0;
  double retained_variance = 0;
  std::vector<MethodResult> methods;
  Interval rerank_minus_projected;  // paired nDCG@10 difference
  nlohmann::json to_json() const;
};

Result<LadderResult> run_ladder(const index::Collection& collection, const LadderOptions& options,
                                const std::function<void(const std::string&)>& progress);

}  // namespace privsearch::eval
