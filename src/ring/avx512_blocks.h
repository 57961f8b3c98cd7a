// Shared AVX-512 helpers: the conditional subtraction of lazy reduction, and the block form of a
// Galois permutation (ring/automorphism.h) on eight 64-bit lanes, shared by
// the AVX-512 kernels that read through one: output block h is source block src[h] with its
// lanes shuffled by the eight bytes of lanes[h]. Include only from translation units compiled
// with -mavx512f (and called only after CPUID says so); internal linkage, so units built with
// different target flags never share a definition.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

namespace privsearch::ring::detail {
namespace {

// x - b when x >= b, else x (lanes unsigned): min(x, x - b), since x - b wraps above x when
// x < b. The one conditional subtraction of the lazy-reduction kernels.
inline __m512i sub_if_ge(__m512i x, __m512i b) {
  return _mm512_min_epu64(x, _mm512_sub_epi64(x, b));
}

// The lane indices of block h, widened from bytes to the qword indices vpermq takes.
inline __m512i block_lane_indices(const std::uint64_t* lanes, std::size_t h) {
  return _mm512_cvtepu8_epi64(_mm_cvtsi64_si128(static_cast<long long>(lanes[h])));
}

inline __m512i permuted_block(const std::uint64_t* in, const std::uint32_t* src,
                              const std::uint64_t* lanes, std::size_t h) {
  return _mm512_permutexvar_epi64(block_lane_indices(lanes, h),
                                  _mm512_loadu_si512(in + 8 * std::size_t{src[h]}));
}

}  // namespace
}  // namespace privsearch::ring::detail
