#include "pir/hintless/matvec.h"

namespace privsearch::pir::hintless {
namespace {

// Two queries' worth of c1 rows (four streams) per pass over the row: each entry is loaded once
// per pair and widened once.
__attribute__((target_clones("avx512f", "avx2", "default"))) void sum_streams(
    const std::uint16_t* __restrict row, std::size_t columns,
    const std::uint32_t* __restrict x0, const std::uint32_t* __restrict x1,
    const std::uint32_t* __restrict x2, const std::uint32_t* __restrict x3, std::uint64_t* out) {
  std::uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (std::size_t c = 0; c < columns; ++c) {
    const std::uint64_t e = row[c];
    s0 += e * x0[c];
    s1 += e * x1[c];
    s2 += e * x2[c];
    s3 += e * x3[c];
  }
  out[0] = s0;
  out[1] = s1;
  out[2] = s2;
  out[3] = s3;
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void sum_two_streams(
    const std::uint16_t* __restrict row, std::size_t columns,
    const std::uint32_t* __restrict x0, const std::uint32_t* __restrict x1, std::uint64_t* out) {
  std::uint64_t s0 = 0, s1 = 0;
  for (std::size_t c = 0; c < columns; ++c) {
    const std::uint64_t e = row[c];
    s0 += e * x0[c];
    s1 += e * x1[c];
  }
  out[0] = s0;
  out[1] = s1;
}

}  // namespace

void matvec_row(const std::uint16_t* row, std::size_t columns, const std::uint32_t* const* c1,
                std::size_t queries, std::uint64_t* sums) {
  std::size_t q = 0;
  for (; q + 2 <= queries; q += 2) {
    sum_streams(row, columns, c1[2 * q], c1[2 * q + 1], c1[2 * q + 2], c1[2 * q + 3],
                sums + 2 * q);
  }
  if (q < queries) sum_two_streams(row, columns, c1[2 * q], c1[2 * q + 1], sums + 2 * q);
}

void matvec_row_reference(const std::uint16_t* row, std::size_t columns,
                          const std::uint32_t* const* c1, std::size_t queries,
                          std::uint64_t* sums) {
  for (std::size_t s = 0; s < 2 * queries; ++s) {
    std::uint64_t acc = 0;
    for (std::size_t c = 0; c < columns; ++c) acc += std::uint64_t{row[c]} * c1[s][c];
    sums[s] = acc;
  }
}

}  // namespace privsearch::pir::hintless
