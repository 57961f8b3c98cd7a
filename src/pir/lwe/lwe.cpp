#include "pir/lwe/lwe.h"

#include <cmath>
#include <string>

#include "core/constant_time.h"
#include "pir/lwe/kernels.h"
#include "pir/lwe/matrix_rows.h"

namespace privsearch::pir {

void expand_lwe_matrix(const Seed& seed, std::size_t first_row, std::size_t rows, std::size_t n,
                       std::size_t ld, std::uint32_t* out) {
  detail::expand_matrix_rows(seed, kLweMatrixStream, kLweMatrixChunkRows, first_row, rows, n, ld,
                             out);
}

std::vector<std::uint32_t> compute_lwe_hint(const LweDatabase& db, const Seed& a_seed,
                                            std::size_t n, unsigned threads) {
  return compute_lwe_hint_rows(db.data(), db.shape().rows, db.shape(), a_seed, n, threads);
}

std::vector<std::uint32_t> compute_lwe_hint_rows(const std::uint8_t* rows_data, std::size_t rows,
                                                 const DatabaseShape& shape, const Seed& a_seed,
                                                 std::size_t n, unsigned threads) {
  const std::size_t ld = hint_ld(n);
  // A padded to ld columns and to stride rows (zero), so the kernel may run over whole blocks.
  std::vector<std::uint32_t> a(shape.columns * ld, 0);
  expand_lwe_matrix(a_seed, 0, shape.columns, n, ld, a.data());
  std::vector<std::uint32_t> h(rows * ld, 0);
  matmul_u8_u32(rows_data, rows, shape.columns, shape.stride, a.data(), n, ld, h.data(), threads);
  return h;
}

Result<std::vector<std::uint32_t>> lwe_answer(const LweDatabase& db,
                                              std::span<const std::uint32_t> query) {
  const auto& shape = db.shape();
  if (query.size() != shape.stride) {
    return invalid_argument_error("PIR query has " + std::to_string(query.size()) +
                                  " entries, the database expects " + std::to_string(shape.stride));
  }
  std::vector<std::uint32_t> ans(shape.rows);
  matvec_u8_u32(db.data(), shape.rows, shape.stride, query.data(), ans.data());
  return ans;
}

}  // namespace privsearch::pir
