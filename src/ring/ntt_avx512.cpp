// AVX-512F/DQ NTT kernels for word-size primes q < 2^62 (the 60-bit primes of the paper's
// preset). Stage logic in ntt_avx512_impl.h.
//
// Lazy Shoup with an approximate high product: w' = floor(w * 2^64 / q). The exact
// floor(x*w'/2^64) is p11 + (p01 >> 32) + (p10 >> 32) + c with the 32-bit partial products
// p_ij = x_i * w'_j and a carry c in {0, 1, 2}; dropping c under-estimates qhat by at most 2,
// so r = x*w - qhat*q (low 64 bits, vpmullq) lies in [0, 4q) < 2^64, and one conditional
// subtraction of 2q returns it to [0, 2q). Three vpmuludq instead of four, no carry chain.
//
// Compiled with -mavx512f -mavx512dq; ntt.cpp calls it only after CPUID says so.
#include "ring/ntt.h"

#if defined(__AVX512F__) && defined(__AVX512DQ__)
#include "ring/ntt_avx512_impl.h"

namespace privsearch::ring::detail {

namespace {
struct Avx512Mul {
  V q, two_q;
  V lazy(V x, V w, V ws) const {
    const V x_hi = _mm512_srli_epi64(x, 32);
    const V ws_hi = _mm512_srli_epi64(ws, 32);
    const V p11 = _mm512_mul_epu32(x_hi, ws_hi);
    const V p01 = _mm512_mul_epu32(x, ws_hi);
    const V p10 = _mm512_mul_epu32(x_hi, ws);
    const V qhat = _mm512_add_epi64(
        p11, _mm512_add_epi64(_mm512_srli_epi64(p01, 32), _mm512_srli_epi64(p10, 32)));
    const V r = _mm512_sub_epi64(_mm512_mullo_epi64(x, w), _mm512_mullo_epi64(qhat, q));
    return sub_if_ge(r, two_q);
  }
};
Avx512Mul avx512_mul(const NttTables& t) {
  return {bcast(t.modulus().value()), bcast(2 * t.modulus().value())};
}
}  // namespace

bool avx512_compiled() { return true; }

void ntt_forward_avx512(const NttTables& t, u64* a) {
  forward_avx512(t, a, avx512_mul(t), t.twiddles().root_shoup64.data());
}

void ntt_inverse_avx512(const NttTables& t, u64* a) {
  inverse_avx512(t, a, avx512_mul(t), t.twiddles().inv_root_shoup64.data(), t.n_inv_shoup64(),
                 t.last_inv_root_scaled_shoup64());
}

}  // namespace privsearch::ring::detail

#else

namespace privsearch::ring::detail {
bool avx512_compiled() { return false; }
void ntt_forward_avx512(const NttTables& t, u64* a) { ntt_forward_scalar(t, a); }
void ntt_inverse_avx512(const NttTables& t, u64* a) { ntt_inverse_scalar(t, a); }
}  // namespace privsearch::ring::detail

#endif
