// AVX-512 NTT stage logic shared by the IFMA kernel (ntt_ifma.cpp, q < 2^50) and the
// AVX-512F/DQ kernel (ntt_avx512.cpp, q < 2^62). Each includer compiles it with its own target
// flags; everything here has internal linkage so the two instantiations never mix.
//
// A `Mul` policy supplies lazy Shoup multiplication by a twiddle: for x in the butterfly's input
// range it returns x*w mod q in [0, 2q), given w and its precomputed companion ws.
// Ranges as in ntt_scalar.cpp: forward values in [0, 4q), inverse in [0, 2q).
// Stages with butterfly distance >= 8 broadcast one twiddle per group; the three stages with
// distance 4, 2, 1 work on 16 values at a time with two-source permutes.
#pragma once

#include <immintrin.h>

#include "ring/avx512_blocks.h"
#include "ring/ntt.h"

namespace privsearch::ring::detail {
namespace {

using V = __m512i;

// x >= b ? x - b : x for x < 2^63 + b: if x < b the difference wraps to a huge value.

template <typename Mul>
struct Butterflies {
  const Mul& mul;
  V two_q;
  // Cooley-Tukey, inputs/outputs in [0, 4q).
  void ct(V& x, V& y, V w, V ws) const {
    const V u = sub_if_ge(x, two_q);
    const V v = mul.lazy(y, w, ws);
    x = _mm512_add_epi64(u, v);
    y = _mm512_add_epi64(_mm512_sub_epi64(u, v), two_q);
  }
  // Gentleman-Sande, inputs/outputs in [0, 2q).
  void gs(V& x, V& y, V w, V ws) const {
    const V s = sub_if_ge(_mm512_add_epi64(x, y), two_q);
    const V d = _mm512_add_epi64(_mm512_sub_epi64(x, y), two_q);
    x = s;
    y = mul.lazy(d, w, ws);
  }
};

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

// The twiddles of the groups covering 16 values, each repeated `gap` times.
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

// The default last-stage output: store the (reduced) values back into the array.
struct StoreInPlace {
  void operator()(u64* a, std::size_t /*index*/, V v) const { _mm512_storeu_si512(a, v); }
};

// kReduce (forward, last stage only): also bring the outputs from [0, 4q) to [0, q) and hand
// each natural-order vector to `out(address, index, value)` (index = offset + position), which
// stores it or fuses more work into the same pass.
template <bool kForward, typename Mul, bool kReduce = false, typename Out = StoreInPlace>
void small_gap_stage(u64* a, std::size_t n, std::size_t gap, std::size_t m, const u64* w,
                     const u64* ws, const Butterflies<Mul>& bf, V q = V{}, const Out& out = {},
                     std::size_t offset = 0) {
  // a: n values starting at group offset 0 of w + m (callers shift w and ws for sub-blocks).
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
      bf.ct(x, y, wv, wsv);
    } else {
      bf.gs(x, y, wv, wsv);
    }
    if constexpr (kReduce) {
      x = sub_if_ge(sub_if_ge(x, bf.two_q), q);
      y = sub_if_ge(sub_if_ge(y, bf.two_q), q);
      out(a + b, offset + b, _mm512_permutex2var_epi64(x, s.lo_idx, y));
      out(a + b + 8, offset + b + 8, _mm512_permutex2var_epi64(x, s.hi_idx, y));
    } else {
      _mm512_storeu_si512(a + b, _mm512_permutex2var_epi64(x, s.lo_idx, y));
      _mm512_storeu_si512(a + b + 8, _mm512_permutex2var_epi64(x, s.hi_idx, y));
    }
  }
}

inline V bcast(u64 v) { return _mm512_set1_epi64(static_cast<long long>(v)); }

// One Cooley-Tukey stage with butterfly distance gap >= 8 over the groups [g_begin, g_end).
template <typename Mul>
inline void large_gap_stage_ct(u64* a, std::size_t gap, std::size_t m, std::size_t g_begin,
                               std::size_t g_end, const u64* w, const u64* ws,
                               const Butterflies<Mul>& bf) {
  for (std::size_t i = g_begin; i < g_end; ++i) {
    const V wv = bcast(w[m + i]), wsv = bcast(ws[m + i]);
    u64* x = a + 2 * i * gap;
    u64* y = x + gap;
    for (std::size_t j = 0; j < gap; j += 8) {
      V xv = _mm512_loadu_si512(x + j);
      V yv = _mm512_loadu_si512(y + j);
      bf.ct(xv, yv, wv, wsv);
      _mm512_storeu_si512(x + j, xv);
      _mm512_storeu_si512(y + j, yv);
    }
  }
}

template <typename Mul>
inline void large_gap_stage_gs(u64* a, std::size_t gap, std::size_t h, std::size_t g_begin,
                               std::size_t g_end, const u64* w, const u64* ws,
                               const Butterflies<Mul>& bf) {
  for (std::size_t i = g_begin; i < g_end; ++i) {
    const V wv = bcast(w[h + i]), wsv = bcast(ws[h + i]);
    u64* x = a + 2 * i * gap;
    u64* y = x + gap;
    for (std::size_t j = 0; j < gap; j += 8) {
      V xv = _mm512_loadu_si512(x + j);
      V yv = _mm512_loadu_si512(y + j);
      bf.gs(xv, yv, wv, wsv);
      _mm512_storeu_si512(x + j, xv);
      _mm512_storeu_si512(y + j, yv);
    }
  }
}

// Cache blocking: a block of kBlock values (16 KB) stays in L1 while it goes through every
// stage whose butterflies stay inside it; only the stages with larger distances are full
// passes over the array (an 8192-value polynomial is 64 KB, twice Zen 4's L1).
inline constexpr std::size_t kBlock = 2048;

// The forward stages from (m, gap) on: m = 1, gap = n/2 is the whole transform.
template <typename Mul, typename Out = StoreInPlace>
void forward_stages(const NttTables& t, u64* a, const Mul& mul, const u64* ws, std::size_t m,
                    std::size_t gap, const Out& out = {}) {
  const std::size_t n = t.n();
  const V q = bcast(t.modulus().value());
  const Butterflies<Mul> bf{mul, bcast(2 * t.modulus().value())};
  const u64* w = t.twiddles().root.data();
  const std::size_t block = std::min(n, kBlock);
  // Full passes while a butterfly spans more than one block.
  for (; gap >= block; m <<= 1, gap >>= 1) large_gap_stage_ct(a, gap, m, 0, m, w, ws, bf);
  // Then block by block through the remaining stages.
  for (std::size_t s = 0; s < n; s += block) {
    std::size_t mb = m, gb = gap;
    for (; gb >= 8; mb <<= 1, gb >>= 1) {
      const std::size_t g0 = s / (2 * gb);
      large_gap_stage_ct(a, gb, mb, g0, g0 + block / (2 * gb), w, ws, bf);
    }
    for (; gb >= 2; mb <<= 1, gb >>= 1) {
      const std::size_t g0 = s / (2 * gb);
      small_gap_stage<true>(a + s, block, gb, mb, w + g0, ws + g0, bf);
    }
    small_gap_stage<true, Mul, true>(a + s, block, 1, mb, w + s / 2, ws + s / 2, bf, q, out, s);
  }
}

template <typename Mul>
void forward_avx512(const NttTables& t, u64* a, const Mul& mul, const u64* ws) {
  forward_stages(t, a, mul, ws, 1, t.n() >> 1);
}

// NttTables::forward_mod_down: the first stage reads y (lifting it when p != 0) into scratch,
// the last stage's outputs v go straight to `out` instead of back into scratch:
//   x unscaled: out = (x + q - v) * w [+ addend]
//   x scaled:   the first stage already multiplies by w (X * w, Y * (psi_1 w): the transform is
//               linear), so out = x + q - v [+ addend] needs no multiplication at all.
// Constants (ModDownConstants, ntt.h) with their Shoup companions in the Mul's word size: fx = 1
// or w (the first stage's factor on X), fy = psi_1 fx (on Y), w for the unscaled epilogue; in
// conversion mode the per-source factors c_i fx, c_i fy (and -m fx, -m fy) instead.
template <typename Mul>
void forward_mod_down_epilogue(const NttTables& t, const ModDownRow& row, u64* scratch,
                               const Mul& mul, const u64* ws, const ModDownConstants& k);

// The first stage's Cooley-Tukey outputs for X < 2q (so no reduction of X) and v = Y w < 2q.
inline void store_first_butterfly(u64* a, std::size_t j, std::size_t half, V x, V v, V two_q) {
  _mm512_storeu_si512(a + j, _mm512_add_epi64(x, v));
  _mm512_storeu_si512(a + j + half, _mm512_add_epi64(_mm512_sub_epi64(x, v), two_q));
}

// Conversion mode: X and Y of the first stage are the conversion sums themselves, already times
// fx and fy (folded into the constants), each term a lazy product in [0, 2q) accumulated with one
// conditional subtraction of 2q, so both stay below 2q.
template <typename Mul>
void forward_mod_down_converted(const NttTables& t, const ModDownRow& row, u64* scratch,
                                const Mul& mul, const u64* ws, const ModDownConstants& k) {
  const std::size_t n = t.n(), half = n >> 1, kf = row.conv().sources;
  const V two_q = bcast(2 * t.modulus().value());
  V cx[ModDownRow::kMaxConvSources + 1], cxs[ModDownRow::kMaxConvSources + 1];
  V cy[ModDownRow::kMaxConvSources + 1], cys[ModDownRow::kMaxConvSources + 1];
  for (std::size_t i = 0; i <= kf; ++i) {
    cx[i] = bcast(k.cx[i]);
    cxs[i] = bcast(k.cx_s[i]);
    cy[i] = bcast(k.cy[i]);
    cys[i] = bcast(k.cy_s[i]);
  }
  for (std::size_t j = 0; j < half; j += 8) {
    V x = _mm512_setzero_si512(), v = x;
    for (std::size_t i = 0; i <= kf; ++i) {
      const u64* src = i < kf ? row.conv().t + i * n : row.conv().u;
      x = sub_if_ge(_mm512_add_epi64(x, mul.lazy(_mm512_loadu_si512(src + j), cx[i], cxs[i])),
                    two_q);
      v = sub_if_ge(
          _mm512_add_epi64(v, mul.lazy(_mm512_loadu_si512(src + j + half), cy[i], cys[i])), two_q);
    }
    store_first_butterfly(scratch, j, half, x, v, two_q);
  }
  forward_mod_down_epilogue(t, row, scratch, mul, ws, k);
}

template <typename Mul>
void forward_mod_down_avx512(const NttTables& t, const ModDownRow& row, u64* scratch,
                             const Mul& mul, const u64* ws, const ModDownConstants& k) {
  if (row.mode() == ModDownRow::Mode::kConversion)
    return forward_mod_down_converted(t, row, scratch, mul, ws, k);
  const std::size_t n = t.n(), half = n >> 1;
  const u64 qv = t.modulus().value();
  const V two_q = bcast(2 * qv);
  const V fy = bcast(k.fy), fys = bcast(k.fy_s), fx = bcast(k.fx), fxs = bcast(k.fx_s);
  // X needs a multiplication when it must be reduced (a lifted value may exceed 4q) or scaled.
  const bool lift = row.mode() == ModDownRow::Mode::kLift;
  const bool mul_x = lift || row.x_prescaled();
  // Centred lift: y > p/2 stands for y - p, i.e. add delta = -p mod q (y + delta < p + q).
  const V p_half = bcast(row.p() >> 1);
  const V delta = bcast(lift ? (qv - row.p() % qv) % qv : 0);
  for (std::size_t j = 0; j < half; j += 8) {
    V x = _mm512_loadu_si512(row.y() + j);
    V y = _mm512_loadu_si512(row.y() + j + half);
    if (lift) {
      x = _mm512_mask_add_epi64(x, _mm512_cmpgt_epu64_mask(x, p_half), x, delta);
      y = _mm512_mask_add_epi64(y, _mm512_cmpgt_epu64_mask(y, p_half), y, delta);
    }
    if (mul_x) x = mul.lazy(x, fx, fxs);  // [0, 2q)
    const V v = mul.lazy(y, fy, fys);
    store_first_butterfly(scratch, j, half, x, v, two_q);
  }
  forward_mod_down_epilogue(t, row, scratch, mul, ws, k);
}

// The remaining stages, whose last one writes out = x + q - v (scaled) or (x + q - v) * w,
// plus the addend.
template <typename Mul>
void forward_mod_down_epilogue(const NttTables& t, const ModDownRow& row, u64* scratch,
                               const Mul& mul, const u64* ws, const ModDownConstants& k) {
  const std::size_t n = t.n();
  const V q = bcast(t.modulus().value());
  const V wv = bcast(k.w), wsv = bcast(k.w_s);
  const bool scaled = row.x_prescaled();
  const bool add = row.addend() != nullptr;
  const std::uint32_t* src =
      add && row.addend_perm() != nullptr ? row.addend_perm()->block_source().data() : nullptr;
  const u64* lanes = src != nullptr ? row.addend_perm()->block_lanes().data() : nullptr;
  auto finish = [&](u64* /*a*/, std::size_t i, V v) {
    const V d = _mm512_sub_epi64(_mm512_add_epi64(_mm512_loadu_si512(row.x() + i), q), v);
    V r = scaled ? sub_if_ge(d, q) : sub_if_ge(mul.lazy(d, wv, wsv), q);
    if (add) {
      const V c = src != nullptr ? permuted_block(row.addend(), src, lanes, i / 8)
                                 : _mm512_loadu_si512(row.addend() + i);
      r = sub_if_ge(_mm512_add_epi64(r, c), q);
    }
    _mm512_storeu_si512(row.out() + i, r);
  };
  forward_stages(t, scratch, mul, ws, 2, n >> 2, finish);
}

template <typename Mul>
void inverse_avx512(const NttTables& t, u64* a, const Mul& mul, const u64* ws, u64 n_inv_s,
                    u64 last_s) {
  const std::size_t n = t.n();
  const V q = bcast(t.modulus().value());
  const Butterflies<Mul> bf{mul, bcast(2 * t.modulus().value())};
  const u64* w = t.twiddles().inv_root.data();
  const std::size_t block = std::min(n, kBlock);
  // Stages with distance below `first_full` stay inside one block; the last stage (distance
  // n/2) is separate because it folds in n^-1.
  const std::size_t first_full = std::min(block, n / 2);
  // Block by block: the stages with distances 1 .. first_full/2 (h = n/(2 gap) groups each).
  for (std::size_t s = 0; s < n; s += block) {
    std::size_t gb = 1;
    for (; gb < 8 && gb < first_full; gb <<= 1) {
      const std::size_t h = n / (2 * gb), g0 = s / (2 * gb);
      small_gap_stage<false>(a + s, block, gb, h, w + g0, ws + g0, bf);
    }
    for (; gb < first_full; gb <<= 1) {
      const std::size_t h = n / (2 * gb), g0 = s / (2 * gb);
      large_gap_stage_gs(a, gb, h, g0, g0 + block / (2 * gb), w, ws, bf);
    }
  }
  // Full passes for the larger distances, except the last stage (distance n/2).
  std::size_t gap = first_full;
  for (; gap < n / 2; gap <<= 1) {
    const std::size_t h = n / (2 * gap);
    large_gap_stage_gs(a, gap, h, 0, h, w, ws, bf);
  }
  // Last stage, one group of distance n/2, with n^-1 folded into both outputs.
  const V ni = bcast(t.n_inv()), nis = bcast(n_inv_s);
  const V wl = bcast(t.last_inv_root_scaled()), wls = bcast(last_s);
  u64* x = a;
  u64* y = a + gap;
  for (std::size_t j = 0; j < gap; j += 8) {
    const V u = _mm512_loadu_si512(x + j);
    const V v = _mm512_loadu_si512(y + j);
    const V sum = _mm512_add_epi64(u, v);                            // [0, 4q)
    const V d = _mm512_add_epi64(_mm512_sub_epi64(u, v), bf.two_q);  // (0, 4q)
    _mm512_storeu_si512(x + j, sub_if_ge(mul.lazy(sum, ni, nis), q));
    _mm512_storeu_si512(y + j, sub_if_ge(mul.lazy(d, wl, wls), q));
  }
}

}  // namespace
}  // namespace privsearch::ring::detail
