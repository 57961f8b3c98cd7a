// AVX-512 IFMA NTT kernels: eight 52-bit lanes, q < 2^50 so that every lazy value (< 4q) fits
// the 52 bits that vpmadd52{lo,hi}uq multiply. Same stages and ranges as ntt_scalar.cpp.
//
// Shoup in 52 bits: with w' = floor(w * 2^52 / q) and x < 2^52, qhat = floor(x * w' / 2^52)
// (madd52hi) is at most one below floor(x*w/q), so x*w - qhat*q lies in [0, 2q) < 2^52 and is
// recovered exactly from the low 52 bits of the two products (madd52lo), subtracted mod 2^52.
//
// Stages whose butterfly distance is 8 or more broadcast one twiddle per group. The last three
// forward stages (distances 4, 2, 1) and the first three inverse stages work on 16 values at a
// time, gathering the X and Y halves of the butterflies with two-source permutes.
//
// This file is compiled with -mavx512f -mavx512ifma; ntt.cpp calls it only after CPUID says
// the CPU has both.
#include "ring/ntt.h"

#if defined(__AVX512F__) && defined(__AVX512IFMA__)
#include <immintrin.h>

namespace privsearch::ring::detail {

namespace {
using V = __m512i;

inline V shoup52(V x, V w, V ws, V q, V mask52) {
  const V zero = _mm512_setzero_si512();
  const V qhat = _mm512_madd52hi_epu64(zero, x, ws);
  const V xw = _mm512_madd52lo_epu64(zero, x, w);
  const V qq = _mm512_madd52lo_epu64(zero, qhat, q);
  return _mm512_and_si512(_mm512_sub_epi64(xw, qq), mask52);
}

// x >= b ? x - b : x for x < 2^63: if x < b the difference wraps to a huge value.
inline V sub_if_ge(V x, V b) { return _mm512_min_epu64(x, _mm512_sub_epi64(x, b)); }

struct Consts {
  V q, two_q, mask52;
};

// Cooley-Tukey butterfly, inputs/outputs in [0, 4q).
inline void ct_butterfly(V& x, V& y, V w, V ws, const Consts& c) {
  const V u = sub_if_ge(x, c.two_q);
  const V v = shoup52(y, w, ws, c.q, c.mask52);
  x = _mm512_add_epi64(u, v);
  y = _mm512_add_epi64(_mm512_sub_epi64(u, v), c.two_q);
}

// Gentleman-Sande butterfly, inputs/outputs in [0, 2q).
inline void gs_butterfly(V& x, V& y, V w, V ws, const Consts& c) {
  const V s = sub_if_ge(_mm512_add_epi64(x, y), c.two_q);
  const V d = _mm512_add_epi64(_mm512_sub_epi64(x, y), c.two_q);
  x = s;
  y = shoup52(d, w, ws, c.q, c.mask52);
}

// Index vectors splitting 16 values (lo = 0..7, hi = 8..15) into butterfly halves for
// distance 4, 2, 1, and the inverse interleavings.
struct Shuffles {
  V x_idx, y_idx, lo_idx, hi_idx;
};
inline Shuffles shuffles_for_gap(std::size_t gap) {
  Shuffles s;
  if (gap == 4) {
    s.x_idx = _mm512_setr_epi64(0, 1, 2, 3, 8, 9, 10, 11);
    s.y_idx = _mm512_setr_epi64(4, 5, 6, 7, 12, 13, 14, 15);
    s.lo_idx = _mm512_setr_epi64(0, 1, 2, 3, 8, 9, 10, 11);
    s.hi_idx = _mm512_setr_epi64(4, 5, 6, 7, 12, 13, 14, 15);
  } else if (gap == 2) {
    s.x_idx = _mm512_setr_epi64(0, 1, 4, 5, 8, 9, 12, 13);
    s.y_idx = _mm512_setr_epi64(2, 3, 6, 7, 10, 11, 14, 15);
    s.lo_idx = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11);
    s.hi_idx = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
  } else {
    s.x_idx = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
    s.y_idx = _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15);
    s.lo_idx = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11);
    s.hi_idx = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
  }
  return s;
}

// The twiddles of the 16/gap/... groups covering 16 values, each repeated gap times.
inline V load_small_gap_twiddles(const u64* w, std::size_t gap) {
  if (gap == 4) {
    const V t = _mm512_zextsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
    return _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 0, 0, 0, 1, 1, 1, 1), t);
  }
  if (gap == 2) {
    const V t = _mm512_zextsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)));
    return _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 0, 1, 1, 2, 2, 3, 3), t);
  }
  return _mm512_loadu_si512(w);
}

// One pass over a stage with butterfly distance gap in {1, 2, 4}; `m` groups, twiddles at
// w[m + i]. Each 16 values hold 16 / (2*gap) groups.
template <bool kForward>
void small_gap_stage(u64* a, std::size_t n, std::size_t gap, std::size_t m, const u64* w,
                     const u64* ws, const Consts& c) {
  const Shuffles s = shuffles_for_gap(gap);
  const std::size_t groups_per_block = 8 / gap;
  for (std::size_t b = 0, g = 0; b < n; b += 16, g += groups_per_block) {
    const V lo = _mm512_loadu_si512(a + b);
    const V hi = _mm512_loadu_si512(a + b + 8);
    V x = _mm512_permutex2var_epi64(lo, s.x_idx, hi);
    V y = _mm512_permutex2var_epi64(lo, s.y_idx, hi);
    const V wv = load_small_gap_twiddles(w + m + g, gap);
    const V wsv = load_small_gap_twiddles(ws + m + g, gap);
    if constexpr (kForward) {
      ct_butterfly(x, y, wv, wsv, c);
    } else {
      gs_butterfly(x, y, wv, wsv, c);
    }
    _mm512_storeu_si512(a + b, _mm512_permutex2var_epi64(x, s.lo_idx, y));
    _mm512_storeu_si512(a + b + 8, _mm512_permutex2var_epi64(x, s.hi_idx, y));
  }
}
}  // namespace

bool ifma_compiled() { return true; }

void ntt_forward_ifma(const NttTables& t, u64* a) {
  const std::size_t n = t.n();
  const u64 qv = t.modulus().value();
  const Consts c{_mm512_set1_epi64(static_cast<long long>(qv)),
                 _mm512_set1_epi64(static_cast<long long>(2 * qv)),
                 _mm512_set1_epi64((1LL << 52) - 1)};
  const u64* w = t.twiddles().root.data();
  const u64* ws = t.twiddles().root_shoup52.data();
  std::size_t m = 1, gap = n >> 1;
  for (; gap >= 8; m <<= 1, gap >>= 1) {
    for (std::size_t i = 0; i < m; ++i) {
      const V wv = _mm512_set1_epi64(static_cast<long long>(w[m + i]));
      const V wsv = _mm512_set1_epi64(static_cast<long long>(ws[m + i]));
      u64* x = a + 2 * i * gap;
      u64* y = x + gap;
      for (std::size_t j = 0; j < gap; j += 8) {
        V xv = _mm512_loadu_si512(x + j);
        V yv = _mm512_loadu_si512(y + j);
        ct_butterfly(xv, yv, wv, wsv, c);
        _mm512_storeu_si512(x + j, xv);
        _mm512_storeu_si512(y + j, yv);
      }
    }
  }
  for (; gap >= 1; m <<= 1, gap >>= 1) small_gap_stage<true>(a, n, gap, m, w, ws, c);
  for (std::size_t j = 0; j < n; j += 8) {
    const V v = _mm512_loadu_si512(a + j);
    _mm512_storeu_si512(a + j, sub_if_ge(sub_if_ge(v, c.two_q), c.q));
  }
}

void ntt_inverse_ifma(const NttTables& t, u64* a) {
  const std::size_t n = t.n();
  const u64 qv = t.modulus().value();
  const Consts c{_mm512_set1_epi64(static_cast<long long>(qv)),
                 _mm512_set1_epi64(static_cast<long long>(2 * qv)),
                 _mm512_set1_epi64((1LL << 52) - 1)};
  const u64* w = t.twiddles().inv_root.data();
  const u64* ws = t.twiddles().inv_root_shoup52.data();
  std::size_t m = n, gap = 1;
  for (; gap < 8; m >>= 1, gap <<= 1) small_gap_stage<false>(a, n, gap, m >> 1, w, ws, c);
  for (; m > 2; m >>= 1, gap <<= 1) {
    const std::size_t h = m >> 1;
    for (std::size_t i = 0; i < h; ++i) {
      const V wv = _mm512_set1_epi64(static_cast<long long>(w[h + i]));
      const V wsv = _mm512_set1_epi64(static_cast<long long>(ws[h + i]));
      u64* x = a + 2 * i * gap;
      u64* y = x + gap;
      for (std::size_t j = 0; j < gap; j += 8) {
        V xv = _mm512_loadu_si512(x + j);
        V yv = _mm512_loadu_si512(y + j);
        gs_butterfly(xv, yv, wv, wsv, c);
        _mm512_storeu_si512(x + j, xv);
        _mm512_storeu_si512(y + j, yv);
      }
    }
  }
  // Last stage, one group of distance n/2, with n^-1 folded into both outputs.
  const V ni = _mm512_set1_epi64(static_cast<long long>(t.n_inv()));
  const V nis = _mm512_set1_epi64(static_cast<long long>(t.n_inv_shoup52()));
  const V wl = _mm512_set1_epi64(static_cast<long long>(t.last_inv_root_scaled()));
  const V wls = _mm512_set1_epi64(static_cast<long long>(t.last_inv_root_scaled_shoup52()));
  u64* x = a;
  u64* y = a + gap;
  for (std::size_t j = 0; j < gap; j += 8) {
    const V u = _mm512_loadu_si512(x + j);
    const V v = _mm512_loadu_si512(y + j);
    const V s = _mm512_add_epi64(u, v);                                   // [0, 4q)
    const V d = _mm512_add_epi64(_mm512_sub_epi64(u, v), c.two_q);        // (0, 4q)
    _mm512_storeu_si512(x + j, sub_if_ge(shoup52(s, ni, nis, c.q, c.mask52), c.q));
    _mm512_storeu_si512(y + j, sub_if_ge(shoup52(d, wl, wls, c.q, c.mask52), c.q));
  }
}

}  // namespace privsearch::ring::detail

#else  // compiler without AVX-512 IFMA: the path is never selected

namespace privsearch::ring::detail {
bool ifma_compiled() { return false; }
void ntt_forward_ifma(const NttTables& t, u64* a) { ntt_forward_scalar(t, a); }
void ntt_inverse_ifma(const NttTables& t, u64* a) { ntt_inverse_scalar(t, a); }
}  // namespace privsearch::ring::detail

#endif
