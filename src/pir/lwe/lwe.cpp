#include "pir/lwe/lwe.h"

#include <cmath>
#include <string>

#include "core/constant_time.h"
#include "pir/lwe/kernels.h"

namespace privsearch::pir {

void expand_lwe_matrix(const Seed& seed, std::size_t first_row, std::size_t rows, std::size_t n,
                       std::size_t ld, std::uint32_t* out) {
  std::vector<std::uint8_t> skip;
  std::size_t row = first_row;
  const std::size_t end = first_row + rows;
  while (row < end) {
    const std::size_t chunk = row / kLweMatrixChunkRows;
    const std::size_t chunk_end = std::min(end, (chunk + 1) * kLweMatrixChunkRows);
    Prng prng = Prng::from_seed(seed, kLweMatrixStream + chunk);
    const std::size_t offset_rows = row - chunk * kLweMatrixChunkRows;
    if (offset_rows > 0) {
      skip.resize(offset_rows * n * 4);
      prng.fill(skip);
    }
    for (; row < chunk_end; ++row) {
      std::uint32_t* dst = out + (row - first_row) * ld;
      prng.fill(std::span(reinterpret_cast<std::uint8_t*>(dst), n * 4));
    }
  }
}

std::vector<std::uint32_t> compute_lwe_hint(const LweDatabase& db, const Seed& a_seed,
                                            std::size_t n, unsigned threads) {
  const auto& shape = db.shape();
  const std::size_t ld = hint_ld(n);
  // A padded to ld columns and to stride rows (zero), so the kernel may run over whole blocks.
  std::vector<std::uint32_t> a(shape.columns * ld, 0);
  expand_lwe_matrix(a_seed, 0, shape.columns, n, ld, a.data());
  std::vector<std::uint32_t> h(shape.rows * ld, 0);
  matmul_u8_u32(db.data(), shape.rows, shape.columns, shape.stride, a.data(), n, ld, h.data(),
                threads);
  return h;
}

Result<std::vector<std::uint32_t>> lwe_answer(const LweDatabase& db,
                                              std::span<const std::uint32_t> query) {
  const auto& shape = db.shape();
  if (query.size() != shape.stride) {
    return invalid_argument_error("PIR query has " + std::to_string(query.size()) +
                                  " entries, the database expects " +
                                  std::to_string(shape.stride));
  }
  std::vector<std::uint32_t> ans(shape.rows);
  matvec_u8_u32(db.data(), shape.rows, shape.stride, query.data(), ans.data());
  return ans;
}

}  // namespace privsearch::pir
