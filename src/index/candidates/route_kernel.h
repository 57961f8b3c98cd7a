// The IVF routing product: scores[l] = <C_l, q> for the coarse centroids C (lists x r, binary16
// as the index stores them) and the query prefix q (r floats). At 10M documents C is 40,000 x 128
// halves (10 MB) per query, a memory-bound pass: reading halves and widening them in registers
// (AVX-512F vcvtph2ps) halves the bytes of a float32 table and needs no BLAS threads (OpenBLAS's
// idle threads spin on sched_yield for a while after each call, taking a core from the rest of
// the search). The scalar loop is the reference and the fallback.
// Thread safety: pure.
#pragma once

#include <cstddef>
#include <cstdint>

namespace privsearch::index {

void half_matvec(const std::uint16_t* table, std::size_t rows, std::size_t cols, const float* q,
                 float* scores);

namespace detail {
bool avx512f_available();
void half_matvec_scalar(const std::uint16_t* table, std::size_t rows, std::size_t cols,
                        const float* q, float* scores);
void half_matvec_avx512(const std::uint16_t* table, std::size_t rows, std::size_t cols,
                        const float* q, float* scores);
}  // namespace detail

}  // namespace privsearch::index
