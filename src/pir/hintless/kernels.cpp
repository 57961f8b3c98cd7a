#include "pir/hintless/kernels.h"

#include "ring/modulus.h"

namespace privsearch::pir::hintless {
namespace {

bool use_avx512() {
  static const bool has = detail::hintless_avx512_compiled() && __builtin_cpu_supports("avx512f") &&
                          __builtin_cpu_supports("avx512bw");
  return has;
}

bool use_ifma() {
  static const bool has =
      use_avx512() && detail::hintless_ifma_compiled() && __builtin_cpu_supports("avx512ifma");
  return has;
}

// x mod q into [0, 2q) for x < 2^58 (kernels.h): the lanes' arithmetic, word for word.
inline std::uint64_t reduce58(std::uint64_t x, ReduceConstants m) {
  const std::uint64_t qhat = ((x >> 26) * m.ratio) >> 32;
  return ring::reduce_once(x - qhat * m.q, m.q);
}

}  // namespace

namespace reference_kernels {

void matvec_rows(const std::uint16_t* rows, std::size_t stride, std::size_t nrows,
                 std::size_t columns, const std::uint32_t* c1a, const std::uint32_t* c1b,
                 std::uint64_t* sums) {
  for (std::size_t r = 0; r < nrows; ++r) {
    std::uint64_t sa = 0, sb = 0;
    for (std::size_t c = 0; c < columns; ++c) {
      const std::uint64_t e = rows[r * stride + c];
      sa += e * c1a[c];
      sb += e * c1b[c];
    }
    sums[2 * r] = sa;
    sums[2 * r + 1] = sb;
  }
}

void pack_butterfly(const std::uint64_t* even, const std::uint64_t* odd, const std::uint64_t* w,
                    ReduceConstants m, std::size_t d, std::uint64_t* plus, std::uint64_t* minus) {
  for (std::size_t i = 0; i < d; ++i) {
    const std::uint64_t t = reduce58(odd[i] * w[i], m);
    plus[i] = even[i] + t;
    minus[i] = even[i] + 2 * m.q - t;
  }
}

// out[i] = reduce(start(i) + sum_j digit_j key_j): the one loop of both accumulations.
template <typename Start>
void digit_products(const std::uint32_t* digits, const std::uint32_t* keys, std::size_t stride,
                    int t, ReduceConstants m, std::size_t count, std::uint64_t* out, Start start) {
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t acc = start(i);
    for (int j = 0; j < t; ++j) {
      acc += static_cast<std::uint64_t>(digits[j * stride + i]) * keys[j * stride + i];
    }
    out[i] = reduce58(acc, m);
  }
}

void pack_accumulate(const std::uint64_t* plus, const std::uint64_t* minus_perm,
                     const std::uint32_t* digits, const std::uint32_t* keys, std::size_t stride,
                     int t, ReduceConstants m, std::size_t count, std::uint64_t* out) {
  digit_products(digits, keys, stride, t, m, count, out,
                 [&](std::size_t i) { return plus[i] + minus_perm[i]; });
}

void pack_accumulate_const(std::uint64_t base, const std::uint32_t* digits,
                           const std::uint32_t* keys, std::size_t stride, int t, ReduceConstants m,
                           std::size_t count, std::uint64_t* out) {
  digit_products(digits, keys, stride, t, m, count, out, [&](std::size_t) { return base; });
}

void pack_accumulate_permuted(const std::uint64_t* plus, const std::uint64_t* minus,
                              const std::uint32_t* block_source, const std::uint64_t* block_lanes,
                              const std::uint32_t* digits, const std::uint32_t* keys,
                              std::size_t stride, int t, ReduceConstants m, std::size_t count,
                              std::uint64_t* out) {
  digit_products(digits, keys, stride, t, m, count, out, [&](std::size_t i) {
    const std::size_t h = i / 8, lane = (block_lanes[h] >> (8 * (i % 8))) & 0xff;
    return plus[i] + minus[8 * std::size_t{block_source[h]} + lane];
  });
}

void pack_leaf_pairs_butterfly(std::uint64_t base_e, std::uint64_t base_o,
                               const std::uint32_t* digits_e, const std::uint32_t* digits_o,
                               const std::uint32_t* keys, std::size_t stride, int t,
                               const std::uint64_t* w, ReduceConstants m, std::size_t count,
                               std::uint64_t* plus, std::uint64_t* minus) {
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t e = base_e, o = base_o;
    for (int j = 0; j < t; ++j) {
      e += static_cast<std::uint64_t>(digits_e[j * stride + i]) * keys[j * stride + i];
      o += static_cast<std::uint64_t>(digits_o[j * stride + i]) * keys[j * stride + i];
    }
    const std::uint64_t even = reduce58(e, m), tw = reduce58(reduce58(o, m) * w[i], m);
    plus[i] = even + tw;
    minus[i] = even + 2 * m.q - tw;
  }
}

}  // namespace reference_kernels

void matvec_rows(const std::uint16_t* rows, std::size_t stride, std::size_t nrows,
                 std::size_t columns, const std::uint32_t* c1a, const std::uint32_t* c1b,
                 std::uint64_t* sums) {
  if (use_ifma()) return detail::matvec_rows_ifma(rows, stride, nrows, columns, c1a, c1b, sums);
  if (use_avx512()) return detail::matvec_rows_avx512(rows, stride, nrows, columns, c1a, c1b, sums);
  reference_kernels::matvec_rows(rows, stride, nrows, columns, c1a, c1b, sums);
}

void pack_butterfly(const std::uint64_t* even, const std::uint64_t* odd, const std::uint64_t* w,
                    ReduceConstants m, std::size_t d, std::uint64_t* plus, std::uint64_t* minus) {
  if (use_avx512() && d % 8 == 0)
    return detail::pack_butterfly_avx512(even, odd, w, m, d, plus, minus);
  reference_kernels::pack_butterfly(even, odd, w, m, d, plus, minus);
}

void pack_accumulate(const std::uint64_t* plus, const std::uint64_t* minus_perm,
                     const std::uint32_t* digits, const std::uint32_t* keys, std::size_t stride,
                     int t, ReduceConstants m, std::size_t count, std::uint64_t* out) {
  if (use_avx512() && count % 8 == 0 && (t == 3 || t == 4)) {
    return detail::pack_accumulate_avx512(plus, minus_perm, digits, keys, stride, t, m, count, out);
  }
  reference_kernels::pack_accumulate(plus, minus_perm, digits, keys, stride, t, m, count, out);
}

void pack_accumulate_const(std::uint64_t base, const std::uint32_t* digits,
                           const std::uint32_t* keys, std::size_t stride, int t, ReduceConstants m,
                           std::size_t count, std::uint64_t* out) {
  if (use_avx512() && count % 8 == 0 && (t == 3 || t == 4)) {
    return detail::pack_accumulate_const_avx512(base, digits, keys, stride, t, m, count, out);
  }
  reference_kernels::pack_accumulate_const(base, digits, keys, stride, t, m, count, out);
}

void pack_accumulate_permuted(const std::uint64_t* plus, const std::uint64_t* minus,
                              const std::uint32_t* block_source, const std::uint64_t* block_lanes,
                              const std::uint32_t* digits, const std::uint32_t* keys,
                              std::size_t stride, int t, ReduceConstants m, std::size_t count,
                              std::uint64_t* out) {
  if (use_avx512() && count % 8 == 0 && (t == 3 || t == 4)) {
    return detail::pack_accumulate_permuted_avx512(plus, minus, block_source, block_lanes, digits,
                                                   keys, stride, t, m, count, out);
  }
  reference_kernels::pack_accumulate_permuted(plus, minus, block_source, block_lanes, digits, keys,
                                              stride, t, m, count, out);
}

void pack_leaf_pairs_butterfly(std::uint64_t base_e, std::uint64_t base_o,
                               const std::uint32_t* digits_e, const std::uint32_t* digits_o,
                               const std::uint32_t* keys, std::size_t stride, int t,
                               const std::uint64_t* w, ReduceConstants m, std::size_t count,
                               std::uint64_t* plus, std::uint64_t* minus) {
  if (use_avx512() && count % 8 == 0 && (t == 3 || t == 4)) {
    return detail::pack_leaf_pairs_butterfly_avx512(base_e, base_o, digits_e, digits_o, keys,
                                                    stride, t, w, m, count, plus, minus);
  }
  reference_kernels::pack_leaf_pairs_butterfly(base_e, base_o, digits_e, digits_o, keys, stride, t,
                                               w, m, count, plus, minus);
}

MatvecPaths matvec_paths() { return MatvecPaths{use_avx512(), use_ifma()}; }

}  // namespace privsearch::pir::hintless
