// AVX-512F/DQ paths of shoup_kernels.h. Lazy Shoup with the approximate high product of
// ring/avx512dq_shoup.h (qhat at most 2 low: x*w - qhat*q in [0, 4q), one subtraction to [0, 2q)).
// Compiled with -mavx512f -mavx512dq; called only after CPUID says so.
#include "ring/shoup_kernels.h"

#if defined(__AVX512F__) && defined(__AVX512DQ__)
#include <immintrin.h>

#include "ring/avx512_blocks.h"
#include "ring/avx512dq_shoup.h"

namespace privsearch::ring::detail {

namespace {
using V = __m512i;
inline V bcast(u64 v) { return _mm512_set1_epi64(static_cast<long long>(v)); }
}  // namespace

bool shoup_avx512_compiled() { return true; }

void mul_scalar_shoup_row_avx512(const u64* in, u64 w, u64 ws, u64* out, std::size_t n, u64 q) {
  const V vq = bcast(q), v2q = bcast(2 * q), vw = bcast(w), vws = bcast(ws);
  for (std::size_t t = 0; t < n; t += 8) {
    const V x = _mm512_loadu_si512(in + t);
    _mm512_storeu_si512(out + t, sub_if_ge(lazy_shoup_dq(x, vw, vws, vq, v2q), vq));
  }
}

void mul_scalar_shoup_acc_lazy_row_avx512(const u64* in, u64 w, u64 ws, u64* acc, std::size_t n,
                                          u64 q) {
  const V vq = bcast(q), v2q = bcast(2 * q), vw = bcast(w), vws = bcast(ws);
  for (std::size_t t = 0; t < n; t += 8) {
    const V x = _mm512_loadu_si512(in + t);
    const V a = _mm512_loadu_si512(acc + t);
    _mm512_storeu_si512(acc + t,
                        sub_if_ge(_mm512_add_epi64(a, lazy_shoup_dq(x, vw, vws, vq, v2q)), v2q));
  }
}

void sub_add_mul_scalar_row_avx512(const u64* x, const u64* y, u64 c_add, u64 w, u64 ws, u64* out,
                                   std::size_t n, u64 q) {
  const V vq = bcast(q), v2q = bcast(2 * q), vw = bcast(w), vws = bcast(ws), vc = bcast(c_add);
  for (std::size_t t = 0; t < n; t += 8) {
    const V a = _mm512_sub_epi64(_mm512_add_epi64(_mm512_loadu_si512(x + t), vc),
                                 _mm512_loadu_si512(y + t));
    _mm512_storeu_si512(out + t, sub_if_ge(lazy_shoup_dq(a, vw, vws, vq, v2q), vq));
  }
}

void add_constant_row_avx512(u64* a, u64 c, std::size_t n, u64 q) {
  const V vq = bcast(q), vc = bcast(c);
  for (std::size_t t = 0; t < n; t += 8) {
    const V x = _mm512_add_epi64(_mm512_loadu_si512(a + t), vc);
    _mm512_storeu_si512(a + t, sub_if_ge(x, vq));
  }
}

void reduce_from_2q_row_avx512(u64* a, std::size_t n, u64 q) {
  const V vq = bcast(q);
  for (std::size_t t = 0; t < n; t += 8) {
    _mm512_storeu_si512(a + t, sub_if_ge(_mm512_loadu_si512(a + t), vq));
  }
}

void round_quotient_row_avx512(const u64* t, const double* inv, std::size_t kf, std::size_t n,
                               u64* u) {
  for (std::size_t c = 0; c < n; c += 8) {
    __m512d v = _mm512_set1_pd(0.5);
    for (std::size_t i = 0; i < kf; ++i) {
      v = _mm512_fmadd_pd(_mm512_cvtepu64_pd(_mm512_loadu_si512(t + i * n + c)),
                          _mm512_set1_pd(inv[i]), v);
    }
    _mm512_storeu_si512(u + c, _mm512_cvttpd_epu64(v));
  }
}

void add_mod_row_avx512(const u64* a, const u64* b, u64* out, std::size_t n, u64 q) {
  const V vq = bcast(q);
  for (std::size_t t = 0; t < n; t += 8) {
    const V s = _mm512_add_epi64(_mm512_loadu_si512(a + t), _mm512_loadu_si512(b + t));
    _mm512_storeu_si512(out + t, sub_if_ge(s, vq));
  }
}

void sub_mod_row_avx512(const u64* a, const u64* b, u64* out, std::size_t n, u64 q) {
  const V vq = bcast(q);
  for (std::size_t t = 0; t < n; t += 8) {
    const V d = _mm512_sub_epi64(_mm512_add_epi64(_mm512_loadu_si512(a + t), vq),
                                 _mm512_loadu_si512(b + t));
    _mm512_storeu_si512(out + t, sub_if_ge(d, vq));
  }
}

void permute_blocks_avx512(const u64* in, const std::uint32_t* src, const u64* lanes, u64* out,
                           std::size_t blocks) {
  for (std::size_t h = 0; h < blocks; ++h) {
    _mm512_storeu_si512(out + 8 * h, permuted_block(in, src, lanes, h));
  }
}

void add_permuted_blocks_avx512(const u64* in, const std::uint32_t* src, const u64* lanes, u64* out,
                                std::size_t blocks, u64 q) {
  const V vq = bcast(q);
  for (std::size_t h = 0; h < blocks; ++h) {
    const V sum =
        _mm512_add_epi64(_mm512_loadu_si512(out + 8 * h), permuted_block(in, src, lanes, h));
    _mm512_storeu_si512(out + 8 * h, sub_if_ge(sum, vq));
  }
}

void lift_centered_row_avx512(const u64* x, u64 p, u64* out, std::size_t n, u64 q, u64 q_shoup_one,
                              u64 p_mod_q) {
  const V vq = bcast(q), v2q = bcast(2 * q), one = bcast(1), ones = bcast(q_shoup_one);
  const V half = bcast(p >> 1), pq = bcast(p_mod_q);
  for (std::size_t t = 0; t < n; t += 8) {
    const V v = _mm512_loadu_si512(x + t);
    const V r = sub_if_ge(lazy_shoup_dq(v, one, ones, vq, v2q), vq);  // v mod q
    const __mmask8 negative = _mm512_cmpgt_epu64_mask(v, half);
    const V d = sub_if_ge(_mm512_sub_epi64(_mm512_add_epi64(r, vq), pq), vq);
    _mm512_storeu_si512(out + t, _mm512_mask_mov_epi64(r, negative, d));
  }
}

void signed_doubles_to_residues_avx512(const double* c, std::size_t n, u64 q, u64* out) {
  const V vq = bcast(q);
  for (std::size_t k = 0; k < n; k += 8) {
    const V v = _mm512_cvttpd_epi64(_mm512_loadu_pd(c + k));
    const V sign = _mm512_srai_epi64(v, 63);
    _mm512_storeu_si512(out + k, _mm512_add_epi64(v, _mm512_and_si512(sign, vq)));
  }
}

}  // namespace privsearch::ring::detail

#else

#include "core/check.h"

namespace privsearch::ring::detail {
// Never called: the dispatcher checks cpu_has_avx512dq(), false when AVX-512 is not compiled.
bool shoup_avx512_compiled() { return false; }
void mul_scalar_shoup_row_avx512(const u64*, u64, u64, u64*, std::size_t, u64) {
  PRIVSEARCH_CHECK(false, "AVX-512 kernel not compiled");
}
void mul_scalar_shoup_acc_lazy_row_avx512(const u64*, u64, u64, u64*, std::size_t, u64) {
  PRIVSEARCH_CHECK(false, "AVX-512 kernel not compiled");
}
void sub_add_mul_scalar_row_avx512(const u64*, const u64*, u64, u64, u64, u64*, std::size_t, u64) {
  PRIVSEARCH_CHECK(false, "AVX-512 kernel not compiled");
}
void add_constant_row_avx512(u64*, u64, std::size_t, u64) {
  PRIVSEARCH_CHECK(false, "AVX-512 kernel not compiled");
}
void reduce_from_2q_row_avx512(u64*, std::size_t, u64) {
  PRIVSEARCH_CHECK(false, "AVX-512 kernel not compiled");
}
void round_quotient_row_avx512(const u64*, const double*, std::size_t, std::size_t, u64*) {
  PRIVSEARCH_CHECK(false, "AVX-512 kernel not compiled");
}
void add_mod_row_avx512(const u64*, const u64*, u64*, std::size_t, u64) {
  PRIVSEARCH_CHECK(false, "AVX-512 kernel not compiled");
}
void sub_mod_row_avx512(const u64*, const u64*, u64*, std::size_t, u64) {
  PRIVSEARCH_CHECK(false, "AVX-512 kernel not compiled");
}
void permute_blocks_avx512(const u64*, const std::uint32_t*, const u64*, u64*, std::size_t) {
  PRIVSEARCH_CHECK(false, "AVX-512 kernel not compiled");
}
void add_permuted_blocks_avx512(const u64*, const std::uint32_t*, const u64*, u64*, std::size_t,
                                u64) {
  PRIVSEARCH_CHECK(false, "AVX-512 kernel not compiled");
}
void lift_centered_row_avx512(const u64*, u64, u64*, std::size_t, u64, u64, u64) {
  PRIVSEARCH_CHECK(false, "AVX-512 kernel not compiled");
}
void signed_doubles_to_residues_avx512(const double*, std::size_t, u64, u64*) {
  PRIVSEARCH_CHECK(false, "AVX-512 kernel not compiled");
}
}  // namespace privsearch::ring::detail

#endif
