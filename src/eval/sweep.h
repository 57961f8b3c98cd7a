// The search paper's sweeps (section 4.1-4.2, Tables 5-8) on any BEIR collection with the
// built-in encoder, on a seeded validation/test split of the judged queries:
//   nested SVD dimensions   exact projected nDCG@10 and retained variance per prefix d' (one fit)
//   joint PQ curve          per d' with M = d'/8: PQ-only and PQ + plaintext rerank (K = 100)
//   K sweep                 at the largest d': rerank nDCG@10 and candidate recall (share of the
//                           exact projected top-10 inside the K candidates)
//   M sensitivity           at the largest d': M in {d'/16, d'/8, d'/4, d'/2}
//   projection controls     SVD against the first coordinates and a seeded Gaussian
//                           orthoprojector at the largest d'
// Split: a query is "validation" when the first 8 bytes of SHA-256("privsearch-split" | seed |
// id) are 0 mod 4 (about a quarter), else "test"; figures are reported for both.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "index/encoders/beir.h"

namespace privsearch::eval {

struct SweepOptions {
  std::vector<std::size_t> dims = {32, 64, 128, 256, 384, 512, 672};
  std::vector<std::size_t> ks = {20, 50, 100, 200};
  std::uint64_t seed = 1;
};

// A mean over the validation and over the test queries of the split.
struct SplitMean {
  double validation = 0, test = 0;
};

// Every figure at one projection (d', and M when PQ is part of it).
struct SweepPoint {
  std::size_t dim = 0;
  SplitMean ndcg10_exact_projected;
  std::optional<std::size_t> pq_m;  // absent: no PQ at this point (projection controls)
  SplitMean ndcg10_pq_only;
  struct AtK {
    SplitMean ndcg10_pq_rerank, candidate_recall_of_exact_top10;
  };
  std::map<std::size_t, AtK> at_k;
  std::optional<double> share_of_fitted_energy;  // the dimension curve only
};

struct SweepResult {
  std::string encoder;
  std::size_t validation_queries = 0, test_queries = 0;
  std::vector<SweepPoint> dimension_curve;  // nested SVD prefixes, M = d'/8, K = 100
  double svd_retained_variance_top_dim = 0;
  SweepPoint k_sweep;                     // largest d', every K
  std::vector<SweepPoint> m_sensitivity;  // largest d', M = d'/16, d'/8, d'/4, d'/2
  SweepPoint control_svd, control_first_coordinates, control_gaussian;

  // The JSON of `privsearch eval --sweep` (field names are an interface).
  nlohmann::json to_json() const;
};

// True when query `id` falls in the validation part of the seeded split.
bool is_validation_query(const std::string& id, std::uint64_t seed);

Result<SweepResult> run_sweep(const index::Collection& collection, const SweepOptions& options,
                              const std::function<void(const std::string&)>& progress);

}  // namespace privsearch::eval
