// AVX-512 VNNI path of the first-layer pass (kernels.h, matvec_rows_split): compiled with VNNI
// and called after a CPUID check.
//
// vpdpwssd multiplies 16-bit pairs and adds both products into a 32-bit lane. Entries are 14
// bits and the query residues are split into chunks of 10, 10 and 8 bits (split_query), so a
// product is below 2^24, a lane gains below 2^25 per instruction and 63 instructions fit a
// signed 32-bit lane; the lanes are folded into 64-bit sums every kSpill iterations. One
// vpdpwssd does 32 multiply-adds where the 64-bit path (vpmuludq) does 8.
#include <immintrin.h>

#include "pir/hintless/kernels.h"

namespace privsearch::pir::hintless::detail {
namespace {

constexpr std::size_t kRows = 4;
constexpr std::size_t kSpill = 60;  // iterations of 32 columns between folds (< 63)

inline std::uint64_t lane_sum(__m512i v) {
  alignas(64) std::int32_t lanes[16];
  _mm512_store_si512(lanes, v);
  std::uint64_t s = 0;
  for (std::int32_t x : lanes) s += static_cast<std::uint32_t>(x);
  return s;
}

// `nrows` <= kRows rows; sums[r][p][j] accumulates chunk j of prime p.
template <std::size_t kN>
void block(const std::uint16_t* rows, std::size_t stride, std::size_t columns,
           const std::int16_t* const* chunk, std::uint64_t (*sums)[6]) {
  // Fully unrolled so that the accumulators live in registers (24 zmm at kN = 4).
  __m512i acc[kN][6];
#pragma GCC unroll 8
  for (std::size_t r = 0; r < kN; ++r) {
#pragma GCC unroll 8
    for (int j = 0; j < 6; ++j) acc[r][j] = _mm512_setzero_si512();
  }
  std::size_t since_spill = 0;
  for (std::size_t c = 0; c < columns; c += 32) {
    const __mmask32 mask = columns - c >= 32 ? ~__mmask32{0} : (__mmask32{1} << (columns - c)) - 1;
    __m512i x[6];
#pragma GCC unroll 8
    for (int j = 0; j < 6; ++j) x[j] = _mm512_loadu_si512(chunk[j] + c);  // padded to 32
#pragma GCC unroll 8
    for (std::size_t r = 0; r < kN; ++r) {
      const __m512i e = _mm512_maskz_loadu_epi16(mask, rows + r * stride + c);
#pragma GCC unroll 8
      for (int j = 0; j < 6; ++j) acc[r][j] = _mm512_dpwssd_epi32(acc[r][j], e, x[j]);
    }
    if (++since_spill == kSpill) {
#pragma GCC unroll 8
      for (std::size_t r = 0; r < kN; ++r) {
#pragma GCC unroll 8
        for (int j = 0; j < 6; ++j) {
          sums[r][j] += lane_sum(acc[r][j]);
          acc[r][j] = _mm512_setzero_si512();
        }
      }
      since_spill = 0;
    }
  }
#pragma GCC unroll 8
  for (std::size_t r = 0; r < kN; ++r) {
#pragma GCC unroll 8
    for (int j = 0; j < 6; ++j) sums[r][j] += lane_sum(acc[r][j]);
  }
}

}  // namespace

bool hintless_vnni_compiled() { return true; }

void matvec_rows_vnni(const std::uint16_t* rows, std::size_t stride, std::size_t nrows,
                      std::size_t columns, const std::int16_t* const* chunk, std::uint64_t* out) {
  for (std::size_t first = 0; first < nrows; first += kRows) {
    const std::size_t n = std::min(kRows, nrows - first);
    std::uint64_t sums[kRows][6] = {};
    const std::uint16_t* base = rows + first * stride;
    switch (n) {
      case 4:
        block<4>(base, stride, columns, chunk, sums);
        break;
      case 3:
        block<3>(base, stride, columns, chunk, sums);
        break;
      case 2:
        block<2>(base, stride, columns, chunk, sums);
        break;
      default:
        block<1>(base, stride, columns, chunk, sums);
        break;
    }
    for (std::size_t r = 0; r < n; ++r) {
      for (int p = 0; p < 2; ++p) {
        const std::uint64_t* s = sums[r] + 3 * p;  // chunks of 10, 10, 8 bits
        out[2 * (first + r) + p] = s[0] + (s[1] << 10) + (s[2] << 20);
      }
    }
  }
}

}  // namespace privsearch::pir::hintless::detail
