// Rows of a public LWE matrix A expanded from a seed, shared by the q = 2^32 (lwe.h) and
// q = 2^64 (lwe64.h) schemes: A comes in chunks of `chunk_rows` rows, chunk k from Prng stream
// `stream_base + k` of the seed, so any side can expand any rows without storing A.
// Thread safety: pure.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/csprng.h"

namespace privsearch::pir::detail {

// Rows [first_row, first_row + rows) of A, n entries of T each, into `out` with `ld` per row
// (padding left untouched).
template <typename T>
void expand_matrix_rows(const Seed& seed, std::uint64_t stream_base, std::size_t chunk_rows,
                        std::size_t first_row, std::size_t rows, std::size_t n, std::size_t ld,
                        T* out) {
  std::vector<std::uint8_t> skip;
  std::size_t row = first_row;
  const std::size_t end = first_row + rows;
  while (row < end) {
    const std::size_t chunk = row / chunk_rows;
    const std::size_t chunk_end = std::min(end, (chunk + 1) * chunk_rows);
    Prng prng = Prng::from_seed(seed, stream_base + chunk);
    const std::size_t offset_rows = row - chunk * chunk_rows;
    if (offset_rows > 0) {
      skip.resize(offset_rows * n * sizeof(T));
      prng.fill(skip);
    }
    for (; row < chunk_end; ++row) {
      T* dst = out + (row - first_row) * ld;
      prng.fill(std::span(reinterpret_cast<std::uint8_t*>(dst), n * sizeof(T)));
    }
  }
}

}  // namespace privsearch::pir::detail
