// AVX-512 RNS kernels (compiled with -mavx512f/dq, called after a CPUID check).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pir/zippir/rns.h"

namespace privsearch::pir::detail {

bool rns_avx512_compiled() { return true; }

// Four rows share each 16-entry slice of x. vpmuludq multiplies the even 32-bit elements of
// each 64-bit lane; the odd ones are shifted down first. Each lane sums cols / 16 products
// below 2^52, far from overflow for cols <= 2^15.
void rns_matvec_avx512(std::span<const std::uint32_t> primes, const std::uint32_t* p,
                       std::size_t rows, std::size_t cols, const std::uint32_t* x,
                       std::uint32_t* out) {
  const std::size_t nprimes = primes.size();
  const std::size_t vec_cols = cols / 16 * 16;
  for (std::size_t l = 0; l < nprimes; ++l) {
    const std::uint32_t* xl = x + l * cols;
    const std::uint64_t q = primes[l];
    std::size_t i = 0;
    auto dot_tail = [&](const std::uint32_t* row, std::uint64_t acc) {
      for (std::size_t j = vec_cols; j < cols; ++j)
        acc += static_cast<std::uint64_t>(row[j]) * xl[j];
      return acc;
    };
    for (; i + 4 <= rows; i += 4) {
      const std::uint32_t* r0 = p + (l * rows + i) * cols;
      const std::uint32_t* r1 = r0 + cols;
      const std::uint32_t* r2 = r1 + cols;
      const std::uint32_t* r3 = r2 + cols;
      __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
      for (std::size_t j = 0; j < vec_cols; j += 16) {
        const __m512i xv = _mm512_loadu_si512(xl + j);
        const __m512i xo = _mm512_srli_epi64(xv, 32);
        auto step = [&](__m512i& acc, const std::uint32_t* row) {
          const __m512i pv = _mm512_loadu_si512(row + j);
          acc = _mm512_add_epi64(acc, _mm512_mul_epu32(pv, xv));
          acc = _mm512_add_epi64(acc, _mm512_mul_epu32(_mm512_srli_epi64(pv, 32), xo));
        };
        step(a0, r0);
        step(a1, r1);
        step(a2, r2);
        step(a3, r3);
      }
      out[l * rows + i] = static_cast<std::uint32_t>(
          dot_tail(r0, static_cast<std::uint64_t>(_mm512_reduce_add_epi64(a0))) % q);
      out[l * rows + i + 1] = static_cast<std::uint32_t>(
          dot_tail(r1, static_cast<std::uint64_t>(_mm512_reduce_add_epi64(a1))) % q);
      out[l * rows + i + 2] = static_cast<std::uint32_t>(
          dot_tail(r2, static_cast<std::uint64_t>(_mm512_reduce_add_epi64(a2))) % q);
      out[l * rows + i + 3] = static_cast<std::uint32_t>(
          dot_tail(r3, static_cast<std::uint64_t>(_mm512_reduce_add_epi64(a3))) % q);
    }
    for (; i < rows; ++i) {
      const std::uint32_t* row = p + (l * rows + i) * cols;
      std::uint64_t acc = 0;
      for (std::size_t j = 0; j < cols; ++j) acc += static_cast<std::uint64_t>(row[j]) * xl[j];
      out[l * rows + i] = static_cast<std::uint32_t>(acc % q);
    }
  }
}

namespace {

// Exact integer below 2^50 in each lane: one floor division and one correction.
inline __m512d reduce_exact(__m512d x, __m512d pf) {
  const __m512d qf = _mm512_roundscale_pd(_mm512_div_pd(x, pf), _MM_FROUND_TO_NEG_INF);
  __m512d r = _mm512_fnmadd_pd(qf, pf, x);
  r = _mm512_mask_add_pd(r, _mm512_cmp_pd_mask(r, _mm512_setzero_pd(), _CMP_LT_OQ), r, pf);
  return _mm512_mask_sub_pd(r, _mm512_cmp_pd_mask(r, pf, _CMP_GE_OQ), r, pf);
}

}  // namespace

// Four inputs at a time share every table load (the table, 2 x words x padded doubles, lives in
// L2); two accumulation chains per input hide the FMA latency.
void rns_words_avx512(const std::uint32_t* words, std::size_t nwords, std::size_t count,
                      const double* pow16, const double* primes_f, std::size_t nprimes,
                      std::size_t padded, std::uint32_t* out) {
  constexpr std::size_t kBlock = 4;
  const std::size_t pieces = 2 * nwords;  // even
  std::vector<double> piece(kBlock * pieces);
  alignas(64) std::uint32_t res[8];
  for (std::size_t j0 = 0; j0 < count; j0 += kBlock) {
    const std::size_t nb = j0 + kBlock <= count ? kBlock : count - j0;
    for (std::size_t b = 0; b < kBlock; ++b) {
      const std::uint32_t* w = words + (j0 + (b < nb ? b : 0)) * nwords;
      for (std::size_t k = 0; k < nwords; ++k) {
        piece[b * pieces + 2 * k] = static_cast<double>(w[k] & 0xffffu);
        piece[b * pieces + 2 * k + 1] = static_cast<double>(w[k] >> 16);
      }
    }
    const double* p0 = piece.data();
    const double* p1 = p0 + pieces;
    const double* p2 = p1 + pieces;
    const double* p3 = p2 + pieces;
    for (std::size_t lv = 0; lv < padded; lv += 8) {
      __m512d a0 = _mm512_setzero_pd(), a1 = a0, b0 = a0, b1 = a0, c0 = a0, c1 = a0, d0 = a0,
              d1 = a0;
      for (std::size_t k = 0; k < pieces; k += 2) {
        const __m512d t0 = _mm512_loadu_pd(pow16 + k * padded + lv);
        const __m512d t1 = _mm512_loadu_pd(pow16 + (k + 1) * padded + lv);
        a0 = _mm512_fmadd_pd(_mm512_set1_pd(p0[k]), t0, a0);
        b0 = _mm512_fmadd_pd(_mm512_set1_pd(p1[k]), t0, b0);
        c0 = _mm512_fmadd_pd(_mm512_set1_pd(p2[k]), t0, c0);
        d0 = _mm512_fmadd_pd(_mm512_set1_pd(p3[k]), t0, d0);
        a1 = _mm512_fmadd_pd(_mm512_set1_pd(p0[k + 1]), t1, a1);
        b1 = _mm512_fmadd_pd(_mm512_set1_pd(p1[k + 1]), t1, b1);
        c1 = _mm512_fmadd_pd(_mm512_set1_pd(p2[k + 1]), t1, c1);
        d1 = _mm512_fmadd_pd(_mm512_set1_pd(p3[k + 1]), t1, d1);
      }
      const __m512d pf = _mm512_loadu_pd(primes_f + lv);
      const __m512d sums[kBlock] = {_mm512_add_pd(a0, a1), _mm512_add_pd(b0, b1),
                                    _mm512_add_pd(c0, c1), _mm512_add_pd(d0, d1)};
      const std::size_t lim = lv + 8 < nprimes ? 8 : nprimes - lv;
      for (std::size_t b = 0; b < nb; ++b) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(res),
                           _mm512_cvttpd_epu32(reduce_exact(sums[b], pf)));
        for (std::size_t t = 0; t < lim; ++t) out[(lv + t) * count + j0 + b] = res[t];
      }
    }
  }
}

}  // namespace privsearch::pir::detail
