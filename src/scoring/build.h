// Builds the three scoring artifacts (layout.h) from the projected document vectors.
//
//  1. X = the first `dim` coordinates of every projected vector (a nested SVD prefix).
//  2. k-means (Faiss, seeded) on the first cluster_dim coordinates into C = ceil(N / (fill R))
//     centroids (a shorter prefix clusters better: SciFact cluster recall 0.85 at 192, 0.79 at
//     672, m = 4).
//  3. Balanced assignment: documents in order of their distance to their nearest centroid
//     (closest first) take the nearest of their 8 nearest centroids with a free slot, else the
//     nearest centroid with a free slot (Tiptoe's size cap with spill-over); slots of a cluster
//     in document order.
//  4. Quantization: M = clamp(round(x doc_scale)), doc_scale = (2^(b-1) - 1) / the 99.9th
//     percentile of |x| over a seeded sample; the matrix holds M + 2^(b-1).
//  5. The hint: rounded high halves of D A (pir::compute_lwe64_hint), A from
//     derive_matrix_seed(seed).
//  6. The plaintext modulus and the answer width: log_p (score_bits), then the widest query
//     switch and the narrowest answer (log_p + 1 .. 32 bits) whose decoding-failure bound is
//     <= 2^-40, refused if none is.
// Thread safety: pure apart from the files it writes (atomically).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "core/status.h"
#include "index/build.h"
#include "index/vectors_io.h"
#include "scoring/layout.h"

namespace privsearch::scoring {

struct ScoringBuildOptions {
  // Measured on SciFact (lexical encoder, d' = 672, m = 4 of 18 clusters): nDCG@10 0.39 / 0.48
  // / 0.51 / 0.55 / 0.576 at dim 128 / 192 / 256 / 384 / 672 against 0.5925 for candidate mode;
  // 3, 4 or 5 document bits within 0.004 of each other. Scale runs pick a lower dim.
  std::uint32_t dim = 672;          // capped at d'
  std::uint32_t cluster_dim = 192;  // k-means and centroid routing on this prefix (capped at dim)
  std::uint32_t doc_bits = 4;
  std::uint32_t query_bits = 7;  // at most 63 per coordinate
  // log_p; 0: min(kDefaultScoreBits, the worst case plaintext_bits_for). The client scales its
  // query to the layout's norm bound (layout.h); answers take log_p + 1 bits.
  std::uint32_t score_bits = 0;
  std::uint32_t cluster_rows = 0;  // 0: default_cluster_rows(N)
  double fill = 0.9;               // documents per slot on average
  // Up to overlap * N documents closest to a second centroid also get a slot there (spare slots
  // only: 1 - fill of them exist).
  double overlap = 0.0;
  std::string lwe_params = "scoring-n2048-ternary";
  bool allow_insecure = false;  // tests: small LWE rows
  std::uint64_t seed = 1;
  unsigned threads = 2;
};

// log_p by measurement (`eval --access-private`, m = 4; `bench private`, m = 8, 1M documents at
// dim 192), against the worst-case modulus that needs no norm bound:
//   log_p (answer bits)          SciFact nDCG@10  Cranfield nDCG@10  1M Hit@10  1M response, m = 8
//   worst case: 20 (22), 18 (19)  0.5857           0.3270             0.85       129,037 B (32-bit
//                                                                                answers, before)
//   15 (16)                       0.5855           0.3281             0.85        64,525 B
//   14 (15)                       0.5857           0.3267             0.85        60,493 B
// (candidate mode 0.5925 / 0.3259 / 0.86): the coarser query costs nothing measurable and the
// response shrinks by half.
inline constexpr std::uint32_t kDefaultScoreBits = 14;

// R = 4 sqrt(N) rounded up to a multiple of 64, within [64, 4096].
std::uint32_t default_cluster_rows(std::uint64_t documents);

struct ScoringArtifacts {
  ScoringLayout layout;
  ScoringMatrix matrix;
  ScoringHint hint;
  double decoding_failure_log2 = 0;
};

Result<ScoringArtifacts> build_scoring(const index::Matrix& projected,
                                       const ScoringBuildOptions& options,
                                       const std::function<void(const std::string&)>& progress);

// The three files in `dir` (layout, matrix, then the hint: the last one written marks a
// complete set); load_scoring reads them back (decoding_failure_log2 is not stored: 0).
Status save_scoring(const std::filesystem::path& dir, const ScoringArtifacts& a);
Result<ScoringArtifacts> load_scoring(const std::filesystem::path& dir);

// index::BuildOptions::extra_artifacts for these options: builds, saves, returns the entries.
index::ExtraArtifacts scoring_artifacts_for_build(const ScoringBuildOptions& options);

}  // namespace privsearch::scoring
