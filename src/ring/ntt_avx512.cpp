// AVX-512F/DQ NTT kernels for word-size primes q < 2^62 (the 60-bit primes of the paper's
// preset). Stage logic in ntt_avx512_impl.h.
//
// Lazy Shoup with an approximate high product (ring/avx512dq_shoup.h).
//
// Compiled with -mavx512f -mavx512dq; ntt.cpp calls it only after CPUID says so.
#include "ring/ntt.h"

#if defined(__AVX512F__) && defined(__AVX512DQ__)
#include "ring/avx512dq_shoup.h"
#include "ring/ntt_avx512_impl.h"

namespace privsearch::ring::detail {

namespace {
struct Avx512Mul {
  V q, two_q;
  V lazy(V x, V w, V ws) const { return lazy_shoup_dq(x, w, ws, q, two_q); }
};
Avx512Mul avx512_mul(const NttTables& t) {
  return {bcast(t.modulus().value()), bcast(2 * t.modulus().value())};
}
}  // namespace

bool avx512_compiled() { return true; }

void ntt_forward_avx512(const NttTables& t, u64* a) {
  forward_avx512(t, a, avx512_mul(t), t.twiddles().root_shoup64.data());
}

void ntt_forward_mod_down_avx512(const NttTables& t, const ModDownRow& row, u64* scratch) {
  const Modulus& q = t.modulus();
  forward_mod_down_avx512(t, row, scratch, avx512_mul(t), t.twiddles().root_shoup64.data(),
                          mod_down_constants(t, row, [&q](u64 w) { return q.shoup(w); }));
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
void ntt_forward_mod_down_avx512(const NttTables& t, const ModDownRow& row, u64* scratch) {
  ntt_forward_mod_down_scalar(t, row, scratch);
}
}  // namespace privsearch::ring::detail

#endif
