// Linear projections from the embedding space (dimension D) to the projected space (d').
//
// SVD (the paper's choice, section 3.1): mu = mean of a seeded sample of documents, V = the top
// d' right singular vectors of the centred sample, by randomized SVD (Halko, Martinsson, Tropp
// 2011, Algorithms 4.4 + 5.1): Y = A Omega with Gaussian Omega (D x (d' + p)), q power
// iterations with re-orthonormalization (QR), B = Q^T A, SVD of the small B. Documents map to
// x = (d - mu) V, queries to z = q V (no centring: every score of a query shifts by the same
// constant q.mu V... so rankings are unchanged). Columns are ordered by singular value, so
// the first d'' columns are the d''-dim projection (nested prefixes). Retained variance =
// sum of the top d' squared singular values over the sample's squared Frobenius norm.
// Controls (the paper's section 4.2): the first d' coordinates, and a seeded Gaussian
// orthoprojector (QR of a D x d' Gaussian matrix); both still subtract mu from documents.
// Randomness: the seeded CSPRNG (public: projection sampling, not secrets).
// Thread safety: a fitted Projection is immutable.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "index/vectors_io.h"

namespace privsearch::index {

enum class ProjectionKind : std::uint8_t { kSvd = 1, kFirstCoordinates = 2, kGaussian = 3 };
std::string_view projection_kind_name(ProjectionKind kind);

struct Projection {
  ProjectionKind kind = ProjectionKind::kSvd;
  std::size_t input_dim = 0;
  std::size_t output_dim = 0;
  std::vector<float> mean;              // input_dim
  std::vector<float> basis;             // input_dim x output_dim, layout (input_dim, output_dim)
  std::vector<double> singular_values;  // output_dim (SVD only)
  double retained_variance = 0;         // fraction of the centred sample's energy (SVD only)

  // (d - mu) V[:, :dims] for every row; dims = 0 means output_dim.
  Matrix project_documents(const Matrix& docs, std::size_t dims = 0) const;
  // q V[:, :dims].
  std::vector<float> project_query(std::span<const float> q, std::size_t dims = 0) const;
};

struct SvdOptions {
  std::size_t sample_size = 200000;  // documents used to fit (all if fewer)
  std::size_t oversample = 10;
  int power_iterations = 2;
  std::uint64_t seed = 1;
};

// kInvalidArgument: output_dim outside [1, min(D, sample rows)].
Result<Projection> fit_svd(const Matrix& docs, std::size_t output_dim, const SvdOptions& options);
Result<Projection> first_coordinates(const Matrix& docs, std::size_t output_dim);
Result<Projection> gaussian_orthoprojector(const Matrix& docs, std::size_t output_dim,
                                           std::uint64_t seed);

}  // namespace privsearch::index
