// The client side of access-private scoring (scoring/layout.h): choose m clusters locally,
// quantize the query, encrypt it once per cluster (pir/lwe/lwe64.h), decode the provider's
// answers with the public hint and map slots back to documents.
//
// Cluster choice from the client's own PQ candidates (the public PQ index is scanned locally,
// so this reveals nothing): the clusters of the two best candidates, then the clusters with the
// most candidates weighted by 1 / log2(rank + 2), then the clusters whose centroids have the
// largest inner product with the query. Every request carries exactly m
// queries of the same size whatever the clusters.
// Query quantization: u = round(z scale) over the first `dim` coordinates, with
// scale = min((2^(bq-1) - 1) / max|z|, (B / N - sqrt(dim) / 2) / ||z||), B = 2^(log_p-1) - 1,
// N^2 = layout.max_norm_sq, so that |M u| <= N ||u|| <= B for every document (Cauchy-Schwarz;
// checked in integers after rounding). A per-query scale does not change the order of one
// query's scores.
// Scores: the provider's matrix holds M' = M + 2^(bd-1); decoding gives M' u mod p, and
// M u = M' u - 2^(bd-1) sum(u) (mod p), lifted to (-p/2, p/2): exact (layout.h bounds |M u|).
// Masks (A s + e, the query-independent part) can be prepared ahead of the query.
// Thread safety: prepare() and encrypt() hold the scorer's OwnerLock (core/owner_lock.h), so
// concurrent callers never pop one mask twice; decode() reads only the pending query's masks.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/csprng.h"
#include "core/owner_lock.h"
#include "core/status.h"
#include "pir/lwe/lwe64.h"
#include "scoring/layout.h"

namespace privsearch::scoring {

struct ScoredDoc {
  std::uint32_t doc = 0;
  std::int64_t score = 0;  // M u, exact integer
};

// m distinct clusters for `candidates` (document rows, best first), by the rule above;
// `clusters_of` is clusters_of_documents(layout), computed once (a pass over every slot).
std::vector<std::uint32_t> choose_clusters(
    const ScoringLayout& layout, std::span<const std::array<std::uint32_t, 2>> clusters_of,
    std::span<const float> query, std::span<const std::uint32_t> candidates, std::size_t m);
// The cluster of every document's first slot (from the slot map).
std::vector<std::uint32_t> cluster_of_documents(const ScoringLayout& layout);
// Every cluster holding each document: {first, second or kEmptySlot} (build overlap).
std::vector<std::array<std::uint32_t, 2>> clusters_of_documents(const ScoringLayout& layout);

std::vector<std::int32_t> quantize_query(const ScoringLayout& layout, std::span<const float> query);

// The exact integer scores M u of every document in `cluster`, computed in the clear from the
// matrix (for tests and for evaluating quality without the cryptography).
std::vector<ScoredDoc> plaintext_cluster_scores(const ScoringLayout& layout,
                                                const ScoringMatrix& matrix,
                                                std::span<const std::int32_t> u,
                                                std::uint32_t cluster);

// Whether any of a document's clusters is among `chosen`.
inline bool any_chosen(const std::array<std::uint32_t, 2>& clusters,
                       std::span<const std::uint32_t> chosen) {
  for (const std::uint32_t c : clusters) {
    if (c != kEmptySlot && std::find(chosen.begin(), chosen.end(), c) != chosen.end()) return true;
  }
  return false;
}

// Best first (ties by document row), each document once.
void sort_and_dedupe(std::vector<ScoredDoc>& scored);

// One encrypted request in flight: the secrets stay here until decode().
struct PendingScore {
  std::vector<std::uint32_t> clusters;
  std::vector<std::int64_t> offset_sums;  // 2^(bd-1) sum(u), per query
  std::vector<pir::Lwe64Mask> masks;
  std::vector<std::uint64_t> queries;  // m x stride, switched (layout.query_drop_bits)
};

class PrivateScorer {
 public:
  // `layout` and `hint` must outlive the scorer. Checks that they agree with each other and
  // with the LWE parameter table.
  static Result<PrivateScorer> create(const ScoringLayout* layout, const ScoringHint* hint,
                                      bool allow_insecure = false);

  // Masks for `count` future queries (offline work).
  Status prepare(std::size_t count, Prng& prng);
  std::size_t prepared() const { return pool_.size(); }

  // choose_clusters with the document -> clusters table made once at create().
  std::vector<std::uint32_t> choose_clusters(std::span<const float> query,
                                             std::span<const std::uint32_t> candidates,
                                             std::size_t m) const {
    return scoring::choose_clusters(*layout_, clusters_of_, query, candidates, m);
  }

  // Encrypts the quantized query into each cluster's block (one mask per cluster).
  Result<PendingScore> encrypt(std::span<const float> query,
                               std::span<const std::uint32_t> clusters, Prng& prng);
  // Scores of every document in the pending clusters, from the provider's packed answers
  // (PrivateScoreResponse.answers: m x R, layout.answer_bits each), best first (ties by
  // document row), each document once (a copy in a second chosen cluster has the same score).
  Result<std::vector<ScoredDoc>> decode(PendingScore&& pending, std::string_view answers) const;

  const ScoringLayout& layout() const { return *layout_; }
  const pir::Lwe64Params& params() const { return params_; }

 private:
  PrivateScorer() = default;
  const ScoringLayout* layout_ = nullptr;
  const ScoringHint* hint_ = nullptr;
  pir::Lwe64Params params_;
  std::vector<std::array<std::uint32_t, 2>> clusters_of_;
  std::vector<pir::Lwe64Mask> pool_;  // each mask is popped once, under owner_
  // The fork generation the pool was made in: a forked child shares the parent's pool, so it
  // drops it before encrypting (two processes popping one mask would leak their difference).
  std::uint64_t pool_fork_generation_ = 0;
  void drop_pool_if_forked();  // under owner_
  OwnerLock owner_;
};

}  // namespace privsearch::scoring
