// AVX-512 F/BW paths of kernels.h (compiled with those flags; called after a CPUID check).
#include <immintrin.h>

#include "pir/hintless/kernels.h"
#include "pir/hintless/matvec_block.h"
#include "ring/avx512_blocks.h"

namespace privsearch::pir::hintless::detail {
namespace {

// x mod q into [0, 2q) for 64-bit lanes x < 2^58 (kernels.h): 32-bit multiplies only; the
// quotient estimate is at most 2 short, so one conditional subtraction leaves r < 2q.
inline __m512i reduce58(__m512i x, __m512i q, __m512i ratio) {
  const __m512i qhat = _mm512_srli_epi64(_mm512_mul_epu32(_mm512_srli_epi64(x, 26), ratio), 32);
  const __m512i r = _mm512_sub_epi64(x, _mm512_mul_epu32(qhat, q));
  return _mm512_min_epu64(r, _mm512_sub_epi64(r, q));
}

// The butterfly's outputs from even e < 2q and t = reduce(odd w) < 2q: plus = e + t and
// minus = e + 2q - t, both in [0, 4q) (kernels.h).
inline void store_butterfly(__m512i e, __m512i t, __m512i q2, std::uint64_t* plus,
                            std::uint64_t* minus) {
  _mm512_storeu_si512(plus, _mm512_add_epi64(e, t));
  _mm512_storeu_si512(minus, _mm512_sub_epi64(_mm512_add_epi64(e, q2), t));
}

// Eight u32 widened to 64-bit lanes.
inline __m512i load_u32x8(const std::uint32_t* p) {
  return _mm512_cvtepu32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// out = reduce(start(i) + sum_j digit_j . key_j), 8 lanes at a time: the one loop of every
// accumulation (start: plus + minus', or a constant). The t digit rows are unrolled at compile
// time (kT = 3 at every secure preset, 4 allowed; GCC -O2 keeps a constant-trip loop unless told):
// 0.61 -> 0.52 us per 2048 coefficients for the constant-start kernel, 0.90 -> 0.66 with
// plus + minus' (same run, 2-vCPU EPYC).
template <int kT, typename Start>
inline void digit_rows(const std::uint32_t* digits, const std::uint32_t* keys, std::size_t stride,
                       ReduceConstants m, std::size_t count, std::uint64_t* out, Start start) {
  const __m512i q = _mm512_set1_epi64(static_cast<long long>(m.q));
  const __m512i ratio = _mm512_set1_epi64(static_cast<long long>(m.ratio));
  for (std::size_t i = 0; i < count; i += 8) {
    __m512i acc = start(i);
#pragma GCC unroll 4
    for (int j = 0; j < kT; ++j) {
      acc = _mm512_add_epi64(acc, _mm512_mul_epu32(load_u32x8(digits + j * stride + i),
                                                   load_u32x8(keys + j * stride + i)));
    }
    _mm512_storeu_si512(out + i, reduce58(acc, q, ratio));
  }
}

// t in {3, 4} (kernels.cpp dispatches here only then).
template <typename Start>
inline void digit_products(const std::uint32_t* digits, const std::uint32_t* keys,
                           std::size_t stride, int t, ReduceConstants m, std::size_t count,
                           std::uint64_t* out, Start start) {
  if (t == 4) return digit_rows<4>(digits, keys, stride, m, count, out, start);
  digit_rows<3>(digits, keys, stride, m, count, out, start);
}

}  // namespace

bool hintless_avx512_compiled() { return true; }

void matvec_rows_avx512(const std::uint16_t* rows, std::size_t stride, std::size_t nrows,
                        std::size_t columns, const std::uint32_t* c1a, const std::uint32_t* c1b,
                        std::uint64_t* sums) {
  matvec_rows_blocked(rows, stride, nrows, columns, c1a, c1b, sums,
                      [](__m512i acc, __m512i e, __m512i x) {
                        return _mm512_add_epi64(acc, _mm512_mul_epu32(e, x));
                      });
}

void pack_butterfly_avx512(const std::uint64_t* even, const std::uint64_t* odd,
                           const std::uint64_t* w, ReduceConstants m, std::size_t d,
                           std::uint64_t* plus, std::uint64_t* minus) {
  const __m512i q = _mm512_set1_epi64(static_cast<long long>(m.q));
  const __m512i ratio = _mm512_set1_epi64(static_cast<long long>(m.ratio));
  const __m512i q2 = _mm512_add_epi64(q, q);
  for (std::size_t i = 0; i < d; i += 8) {
    const __m512i e = _mm512_loadu_si512(even + i);
    const __m512i t = reduce58(
        _mm512_mul_epu32(_mm512_loadu_si512(odd + i), _mm512_loadu_si512(w + i)), q, ratio);
    store_butterfly(e, t, q2, plus + i, minus + i);
  }
}

void pack_accumulate_avx512(const std::uint64_t* plus, const std::uint64_t* minus_perm,
                            const std::uint32_t* digits, const std::uint32_t* keys,
                            std::size_t stride, int t, ReduceConstants m, std::size_t count,
                            std::uint64_t* out) {
  digit_products(digits, keys, stride, t, m, count, out, [&](std::size_t i) {
    return _mm512_add_epi64(_mm512_loadu_si512(plus + i), _mm512_loadu_si512(minus_perm + i));
  });
}

void pack_accumulate_permuted_avx512(const std::uint64_t* plus, const std::uint64_t* minus,
                                     const std::uint32_t* block_source,
                                     const std::uint64_t* block_lanes, const std::uint32_t* digits,
                                     const std::uint32_t* keys, std::size_t stride, int t,
                                     ReduceConstants m, std::size_t count, std::uint64_t* out) {
  digit_products(digits, keys, stride, t, m, count, out, [&](std::size_t i) {
    return _mm512_add_epi64(_mm512_loadu_si512(plus + i),
                            ring::detail::permuted_block(minus, block_source, block_lanes, i / 8));
  });
}

namespace {
template <int kT>
void leaf_pairs_butterfly(std::uint64_t base_e, std::uint64_t base_o, const std::uint32_t* de,
                          const std::uint32_t* dodd, const std::uint32_t* keys, std::size_t stride,
                          const std::uint64_t* w, ReduceConstants m, std::size_t count,
                          std::uint64_t* plus, std::uint64_t* minus) {
  const __m512i q = _mm512_set1_epi64(static_cast<long long>(m.q));
  const __m512i q2 = _mm512_add_epi64(q, q);
  const __m512i ratio = _mm512_set1_epi64(static_cast<long long>(m.ratio));
  const __m512i be = _mm512_set1_epi64(static_cast<long long>(base_e));
  const __m512i bo = _mm512_set1_epi64(static_cast<long long>(base_o));
  for (std::size_t i = 0; i < count; i += 8) {
    __m512i e = be, o = bo;
#pragma GCC unroll 4
    for (int j = 0; j < kT; ++j) {
      const __m512i kj = load_u32x8(keys + j * stride + i);
      e = _mm512_add_epi64(e, _mm512_mul_epu32(load_u32x8(de + j * stride + i), kj));
      o = _mm512_add_epi64(o, _mm512_mul_epu32(load_u32x8(dodd + j * stride + i), kj));
    }
    e = reduce58(e, q, ratio);
    const __m512i t =
        reduce58(_mm512_mul_epu32(reduce58(o, q, ratio), _mm512_loadu_si512(w + i)), q, ratio);
    store_butterfly(e, t, q2, plus + i, minus + i);
  }
}
}  // namespace

void pack_leaf_pairs_butterfly_avx512(std::uint64_t base_e, std::uint64_t base_o,
                                      const std::uint32_t* digits_e, const std::uint32_t* digits_o,
                                      const std::uint32_t* keys, std::size_t stride, int t,
                                      const std::uint64_t* w, ReduceConstants m, std::size_t count,
                                      std::uint64_t* plus, std::uint64_t* minus) {
  if (t == 4) {
    return leaf_pairs_butterfly<4>(base_e, base_o, digits_e, digits_o, keys, stride, w, m, count,
                                   plus, minus);
  }
  leaf_pairs_butterfly<3>(base_e, base_o, digits_e, digits_o, keys, stride, w, m, count, plus,
                          minus);
}

void pack_accumulate_const_avx512(std::uint64_t base, const std::uint32_t* digits,
                                  const std::uint32_t* keys, std::size_t stride, int t,
                                  ReduceConstants m, std::size_t count, std::uint64_t* out) {
  const __m512i b = _mm512_set1_epi64(static_cast<long long>(base));
  digit_products(digits, keys, stride, t, m, count, out, [&](std::size_t) { return b; });
}

}  // namespace privsearch::pir::hintless::detail
