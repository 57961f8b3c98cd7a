// Portable NTT kernels (see ntt.h for the transform and the value ranges).
#include "ring/ntt.h"

namespace privsearch::ring::detail {

namespace {
// x >= bound ? x - bound : x, branch-free.
inline u64 sub_if_ge(u64 x, u64 bound) {
  const u64 t = x - bound;
  return t + (bound & (u64{0} - (t >> 63)));
}
}  // namespace

void ntt_forward_scalar(const NttTables& t, u64* a) {
  const std::size_t n = t.n();
  const u64 q = t.modulus().value();
  const u64 two_q = 2 * q;
  const u64* w = t.twiddles().root.data();
  const u64* ws = t.twiddles().root_shoup64.data();
  // Cooley-Tukey, Longa-Naehrig Alg. 1 with Harvey's butterfly; values in [0, 4q).
  for (std::size_t m = 1, gap = n >> 1; m < n; m <<= 1, gap >>= 1) {
    for (std::size_t i = 0; i < m; ++i) {
      const u64 wi = w[m + i];
      const u64 wsi = ws[m + i];
      u64* x = a + 2 * i * gap;
      u64* y = x + gap;
      for (std::size_t j = 0; j < gap; ++j) {
        const u64 u = sub_if_ge(x[j], two_q);             // [0, 2q)
        const u64 v = y[j] * wi - mul_hi(y[j], wsi) * q;  // [0, 2q)
        x[j] = u + v;                                     // [0, 4q)
        y[j] = u - v + two_q;                             // (0, 4q)
      }
    }
  }
  for (std::size_t j = 0; j < n; ++j) a[j] = sub_if_ge(sub_if_ge(a[j], two_q), q);
}

void ntt_inverse_scalar(const NttTables& t, u64* a) {
  const std::size_t n = t.n();
  const u64 q = t.modulus().value();
  const u64 two_q = 2 * q;
  const u64* w = t.twiddles().inv_root.data();
  const u64* ws = t.twiddles().inv_root_shoup64.data();
  // Gentleman-Sande, Longa-Naehrig Alg. 2; values in [0, 2q). The last stage (one group)
  // folds in the factor n^-1.
  std::size_t gap = 1;
  for (std::size_t m = n; m > 2; m >>= 1, gap <<= 1) {
    const std::size_t h = m >> 1;
    for (std::size_t i = 0; i < h; ++i) {
      const u64 wi = w[h + i];
      const u64 wsi = ws[h + i];
      u64* x = a + 2 * i * gap;
      u64* y = x + gap;
      for (std::size_t j = 0; j < gap; ++j) {
        const u64 u = x[j];
        const u64 v = y[j];
        x[j] = sub_if_ge(u + v, two_q);      // [0, 2q)
        const u64 d = u - v + two_q;         // (0, 4q)
        y[j] = d * wi - mul_hi(d, wsi) * q;  // [0, 2q)
      }
    }
  }
  const u64 ni = t.n_inv(), nis = t.n_inv_shoup64();
  const u64 wl = t.last_inv_root_scaled(), wls = t.last_inv_root_scaled_shoup64();
  u64* x = a;
  u64* y = a + gap;
  for (std::size_t j = 0; j < gap; ++j) {
    const u64 u = x[j];
    const u64 v = y[j];
    const u64 s = u + v;          // [0, 4q)
    const u64 d = u - v + two_q;  // (0, 4q)
    x[j] = sub_if_ge(s * ni - mul_hi(s, nis) * q, q);
    y[j] = sub_if_ge(d * wl - mul_hi(d, wls) * q, q);
  }
}

}  // namespace privsearch::ring::detail
