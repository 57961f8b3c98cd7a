// Precomputed embeddings: .npy (NumPy format 1.0-3.0, 2-D, C order, little-endian float32 or
// float64) and .fvecs (per row: int32 dimension, then that many float32), plus an ID file (one
// id per line) that names the rows.
//
// Errors name the file and what is wrong: bad magic or header, Fortran order, unsupported
// dtype, declared shape larger than the file (checked before allocating), a dimension that
// changes between .fvecs rows, a NaN/Inf value (with its row and column), an ID count that does
// not match the rows, an empty or duplicate ID (with its line).
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "core/status.h"

namespace privsearch::index {

// Row-major float32 matrix.
struct Matrix {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<float> data;  // rows * cols, layout (rows, cols)
  const float* row(std::size_t r) const { return data.data() + r * cols; }
};

Result<Matrix> load_npy(const std::filesystem::path& file);
Result<Matrix> load_fvecs(const std::filesystem::path& file);
// .npy or .fvecs by extension.
Result<Matrix> load_vectors(const std::filesystem::path& file);
Result<std::vector<std::string>> load_ids(const std::filesystem::path& file,
                                          std::size_t expected_rows);

// Writes a float32 .npy (used by tests and by `privsearch build` to export projections).
Status save_npy(const std::filesystem::path& file, const Matrix& m);

}  // namespace privsearch::index
