// The first-layer pass: sums_{2q + p} = sum_c row[c] c1_{2q + p}[c] for K queries and both
// primes, exact in 64 bits (entries < 2^14, residues < 2^28, at most kMaxColumns = 2^22 terms).
// One row of D is read once for the whole batch (YPIR section 4.3's cross-query batching).
// The loop is written for the compiler's vectoriser and built once per instruction set
// (AVX-512, AVX2, baseline; chosen at load time by the loader's ifunc), all giving the same sums.
// Thread safety: pure function.
#pragma once

#include <cstddef>
#include <cstdint>

namespace privsearch::pir::hintless {

void matvec_row(const std::uint16_t* row, std::size_t columns, const std::uint32_t* const* c1,
                std::size_t queries, std::uint64_t* sums);
// The plain loop, for tests of the dispatched one.
void matvec_row_reference(const std::uint16_t* row, std::size_t columns,
                          const std::uint32_t* const* c1, std::size_t queries,
                          std::uint64_t* sums);

}  // namespace privsearch::pir::hintless
