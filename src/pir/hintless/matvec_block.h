// The first-layer pass's inner block (kernels.h, matvec_rows), shared by the AVX-512 F and the
// AVX-512 IFMA translation units: kRows rows against one query, 8 columns per step, both primes.
//
// Why it is shaped this way (2-vCPU EPYC, one 1.2 GB pass over 18432 x 33289 entries, same run):
// - The row loop is unrolled at compile time so that the 2 kRows accumulators stay in registers.
//   GCC 12 -O2 kept the loop and the accumulators on the stack: 209 ms -> 72 ms.
// - Each row is a separate stream 66 KB from the next, and this machine's hardware prefetcher
//   does not keep kRows strided streams ahead: a software prefetch kPrefetchBytes ahead of each
//   row, once per cache line, gives 72 ms -> 57 ms (21 GB/s; a plain streaming read is ~27 GB/s).
// - The multiply-add: `MulAdd` is vpmuludq + vpaddq (AVX-512 F) or one vpmadd52luq (IFMA,
//   51 ms): entries < 2^14 and residues < 2^28 make every product < 2^42 < 2^52, exact in
//   either, and the 64-bit lanes hold sums of up to 2^22 columns (kMaxColumns).
// Included only by translation units compiled with AVX-512 enabled.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

namespace privsearch::pir::hintless::detail {

inline constexpr std::size_t kPrefetchBytes = 512;

// GCC 12's _mm512_reduce_add_epi64 trips -Wuninitialized on its own pass-through operand.
inline std::uint64_t lane_total(__m512i v) {
  alignas(64) std::uint64_t lanes[8];
  _mm512_store_si512(lanes, v);
  std::uint64_t s = 0;
  for (std::uint64_t x : lanes) s += x;
  return s;
}

template <std::size_t kRows, typename MulAdd>
inline void matvec_block(const std::uint16_t* rows, std::size_t stride, std::size_t columns,
                         const std::uint32_t* c1a, const std::uint32_t* c1b, std::uint64_t* sums,
                         MulAdd mul_add) {
  __m512i acc_a[kRows], acc_b[kRows];
#pragma GCC unroll 8
  for (std::size_t r = 0; r < kRows; ++r) acc_a[r] = acc_b[r] = _mm512_setzero_si512();
  std::size_t c = 0;
  for (; c + 8 <= columns; c += 8) {
    const __m512i xa =
        _mm512_cvtepu32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(c1a + c)));
    const __m512i xb =
        _mm512_cvtepu32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(c1b + c)));
    const bool line_start = c % 32 == 0;  // 32 entries = one 64-byte line
#pragma GCC unroll 8
    for (std::size_t r = 0; r < kRows; ++r) {
      const std::uint16_t* at = rows + r * stride + c;
      if (line_start) {
        _mm_prefetch(reinterpret_cast<const char*>(at) + kPrefetchBytes, _MM_HINT_T0);
      }
      const __m512i e =
          _mm512_cvtepu16_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at)));
      acc_a[r] = mul_add(acc_a[r], e, xa);
      acc_b[r] = mul_add(acc_b[r], e, xb);
    }
  }
  for (std::size_t r = 0; r < kRows; ++r) {
    std::uint64_t sa = lane_total(acc_a[r]), sb = lane_total(acc_b[r]);
    for (std::size_t k = c; k < columns; ++k) {
      const std::uint64_t e = rows[r * stride + k];
      sa += e * c1a[k];
      sb += e * c1b[k];
    }
    sums[2 * r] = sa;
    sums[2 * r + 1] = sb;
  }
}

// Rows in blocks of 8, then 4, then 1.
template <typename MulAdd>
inline void matvec_rows_blocked(const std::uint16_t* rows, std::size_t stride, std::size_t nrows,
                                std::size_t columns, const std::uint32_t* c1a,
                                const std::uint32_t* c1b, std::uint64_t* sums, MulAdd mul_add) {
  std::size_t r = 0;
  for (; r + 8 <= nrows; r += 8)
    matvec_block<8>(rows + r * stride, stride, columns, c1a, c1b, sums + 2 * r, mul_add);
  for (; r + 4 <= nrows; r += 4)
    matvec_block<4>(rows + r * stride, stride, columns, c1a, c1b, sums + 2 * r, mul_add);
  for (; r < nrows; ++r)
    matvec_block<1>(rows + r * stride, stride, columns, c1a, c1b, sums + 2 * r, mul_add);
}

}  // namespace privsearch::pir::hintless::detail
