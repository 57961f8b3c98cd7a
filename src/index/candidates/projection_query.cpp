// The query side of a projection (no BLAS or LAPACK: the WebAssembly client compiles it): the
// kind's name and z = q V, the query times the basis's first `dims` columns.
#include "index/candidates/projection.h"

namespace privsearch::index {

std::string_view projection_kind_name(ProjectionKind kind) {
  switch (kind) {
    case ProjectionKind::kSvd:
      return "svd";
    case ProjectionKind::kFirstCoordinates:
      return "first-coordinates";
    case ProjectionKind::kGaussian:
      return "gaussian";
  }
  return "unknown";
}

std::vector<float> Projection::project_query(std::span<const float> q, std::size_t dims) const {
  const std::size_t k = dims == 0 ? output_dim : std::min(dims, output_dim);
  std::vector<float> z(k, 0.0f);
  for (std::size_t c = 0; c < input_dim && c < q.size(); ++c) {
    for (std::size_t j = 0; j < k; ++j) z[j] += q[c] * basis[c * output_dim + j];
  }
  return z;
}

}  // namespace privsearch::index
