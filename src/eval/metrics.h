// Retrieval metrics as BEIR computes them (pytrec_eval / trec_eval definitions):
//  - nDCG@k with linear graded gains: DCG = sum_{i<k} rel_i / log2(i + 2), divided by the DCG
//    of the ideal ordering of all judged grades for the query;
//  - MRR@k: 1 / rank of the first document with rel > 0 within the top k (0 if none);
//  - Recall@k: |relevant in top k| / |relevant| (relevant: rel > 0);
//  - Hit@k: 1 if any relevant document is in the top k.
// Paired bootstrap (Efron-Tibshirani): resample queries with replacement, seeded, and report
// the 2.5/97.5 percentiles of the mean (or of the mean difference of two systems).
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace privsearch::eval {

struct QueryMetrics {
  double ndcg_at_10 = 0;
  double mrr_at_10 = 0;
  double recall_at_10 = 0;
  double recall_at_100 = 0;
  double hit_at_1 = 0;
  double hit_at_10 = 0;
};

// ranking: document ids best first; judged: document id -> grade.
QueryMetrics score_ranking(const std::vector<std::string>& ranking,
                           const std::map<std::string, int>& judged);
double ndcg_at(const std::vector<std::string>& ranking, const std::map<std::string, int>& judged,
               std::size_t k);

struct Interval {
  double mean = 0;
  double low = 0;   // 2.5th percentile
  double high = 0;  // 97.5th percentile
};

// Indices of the `k` largest scores, best first, ties by the smaller index (deterministic).
std::vector<std::size_t> top_indices(const std::vector<double>& scores, std::size_t k);

// The search paper's decision on a paired difference interval (CKKS minus plaintext): inside
// [-margin, margin] -> "equivalent"; lower end >= -margin only -> "non-inferior"; upper end
// below -margin -> "inferior"; otherwise "inconclusive" (containing zero is not evidence).
std::string equivalence_decision(const Interval& difference, double margin);

// CI of the mean of `values`.
Interval bootstrap_mean(const std::vector<double>& values, std::size_t resamples,
                        std::uint64_t seed);
// CI of mean(a - b) over paired queries (a.size() == b.size()).
Interval paired_bootstrap_difference(const std::vector<double>& a, const std::vector<double>& b,
                                     std::size_t resamples, std::uint64_t seed);

}  // namespace privsearch::eval
