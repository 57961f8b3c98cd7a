// AVX-512 IFMA path of the first-layer pass (kernels.h, matvec_rows): compiled with IFMA and
// called after a CPUID check. One vpmadd52luq per 8 multiply-adds: e c1 < 2^42 is exact in its
// 52-bit product, and the add into the 64-bit lane is a full 64-bit add (matvec_block.h).
#include "pir/hintless/kernels.h"
#include "pir/hintless/matvec_block.h"

namespace privsearch::pir::hintless::detail {

bool hintless_ifma_compiled() { return true; }

void matvec_rows_ifma(const std::uint16_t* rows, std::size_t stride, std::size_t nrows,
                      std::size_t columns, const std::uint32_t* c1a, const std::uint32_t* c1b,
                      std::uint64_t* sums) {
  matvec_rows_blocked(
      rows, stride, nrows, columns, c1a, c1b, sums,
      [](__m512i acc, __m512i e, __m512i x) { return _mm512_madd52lo_epu64(acc, e, x); });
}

}  // namespace privsearch::pir::hintless::detail
