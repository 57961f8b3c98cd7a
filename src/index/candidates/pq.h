// Product quantization of projected document vectors (the public artifact) and the client's
// candidate search.
//
// Codebooks are trained with Faiss (ProductQuantizer, k-means per subspace, 8 bits, seeded
// training sample; Jegou, Douze, Schmid 2011) and kept in our own types: Faiss stays inside
// pq.cpp. Codes: n * m bytes, layout (n, m). Search (asymmetric distance computation, inner
// product): per query a table lut[j][c] = <q_j, centroid_{j,c}> (m x 256), each document's
// score is sum_j lut[j][code_j]; the top K are returned best first, ties broken by the smaller
// document index so the result is deterministic.
// Thread safety: an artifact is immutable; search may run concurrently.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"
#include "index/vectors_io.h"

namespace privsearch::index {

struct PqCodebook {
  std::size_t dim = 0;  // d'
  std::size_t m = 0;    // subquantizers
  std::size_t ksub = 256;
  std::size_t dsub = 0;          // d' / m
  std::vector<float> centroids;  // m * ksub * dsub, layout (m, ksub, dsub)
};

struct PqArtifact {
  PqCodebook codebook;
  std::size_t count = 0;
  std::vector<std::uint8_t> codes;  // count * m, layout (count, m)
};

struct PqOptions {
  std::size_t m = 0;                // 0 = d' / 8 (the paper's joint curve M = d'/8)
  std::size_t train_size = 200000;  // seeded training sample
  std::uint64_t seed = 1;
};

// The default number of subquantizers for d': d' / divisor (the paper's M = d'/8), lowered to the
// nearest divisor of d' so the subspaces are equal; at least 1.
std::size_t default_pq_m(std::size_t dim, std::size_t divisor = 8);

// `count` distinct row indices of `rows`, drawn by a Fisher-Yates prefix from the build seed
// (`stream` separates the uses: 4 = PQ training, 5 = IVF training).
std::vector<std::size_t> seeded_sample(std::size_t rows, std::size_t count, std::uint64_t seed,
                                       std::uint32_t stream);

// kInvalidArgument when m does not divide d' or the sample is smaller than 256 vectors;
// kInternal wrapping a Faiss exception.
Result<PqArtifact> build_pq(const Matrix& projected, const PqOptions& options);

// The two phases of build_pq, for builds that stream their rows: a codebook trained on every row
// of `sample` (at least 256), and the codes of `rows` under a codebook (rows x M, layout (row, M)).
Result<PqCodebook> train_pq_codebook(const Matrix& sample, std::size_t m, std::uint64_t seed);
Result<std::vector<std::uint8_t>> pq_encode(const PqCodebook& codebook, const Matrix& rows);

// A codebook of shape (d', M, 256 centroids of d'/M values), centroids zero (loaders fill them);
// M must divide d'.
PqCodebook shaped_codebook(std::size_t dim, std::size_t m);

// The vector a code decodes to (for reconstruction audits and tests).
std::vector<float> pq_decode(const PqCodebook& cb, const std::uint8_t* code);

// Top-k document indices by approximate inner product with `query` (d' values).
Result<std::vector<std::uint32_t>> pq_search(const PqArtifact& artifact,
                                             std::span<const float> query, std::size_t k);

}  // namespace privsearch::index
