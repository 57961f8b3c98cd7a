// AVX-512 IFMA NTT kernels: eight 52-bit lanes, q < 2^50 so that every lazy value (< 4q) fits
// the 52 bits that vpmadd52{lo,hi}uq multiply. Stage logic in ntt_avx512_impl.h.
//
// Shoup in 52 bits: with w' = floor(w * 2^52 / q) and x < 2^52, qhat = floor(x * w' / 2^52)
// (madd52hi) is at most one below floor(x*w/q), so x*w - qhat*q lies in [0, 2q) < 2^52 and is
// recovered exactly from the low 52 bits of the two products (madd52lo), subtracted mod 2^52.
//
// Compiled with -mavx512f -mavx512ifma; ntt.cpp calls it only after CPUID says the CPU has both.
#include "ring/ntt.h"

#if defined(__AVX512F__) && defined(__AVX512IFMA__)
#include "ring/ntt_avx512_impl.h"

namespace privsearch::ring::detail {

namespace {
struct IfmaMul {
  V neg_q, mask52;  // 2^52 - q
  // lo52(x w) + lo52(qhat (2^52 - q)) = x w - qhat q mod 2^52: the subtraction rides on the
  // accumulator of the third multiply-add, one instruction fewer per butterfly.
  V lazy(V x, V w, V ws) const {
    const V zero = _mm512_setzero_si512();
    const V qhat = _mm512_madd52hi_epu64(zero, x, ws);
    const V xw = _mm512_madd52lo_epu64(zero, x, w);
    return _mm512_and_si512(_mm512_madd52lo_epu64(xw, qhat, neg_q), mask52);
  }
};
IfmaMul ifma_mul(const NttTables& t) {
  return {bcast((u64{1} << 52) - t.modulus().value()), bcast((u64{1} << 52) - 1)};
}
}  // namespace

bool ifma_compiled() { return true; }

void ntt_forward_ifma(const NttTables& t, u64* a) {
  forward_avx512(t, a, ifma_mul(t), t.twiddles().root_shoup52.data());
}

void ntt_forward_mod_down_ifma(const NttTables& t, const ModDownRow& row, u64* scratch) {
  const u64 q = t.modulus().value();
  auto shoup52 = [q](u64 w) { return static_cast<u64>((static_cast<u128>(w) << 52) / q); };
  forward_mod_down_avx512(t, row, scratch, ifma_mul(t), t.twiddles().root_shoup52.data(),
                          mod_down_constants(t, row, shoup52));
}

void ntt_inverse_ifma(const NttTables& t, u64* a) {
  inverse_avx512(t, a, ifma_mul(t), t.twiddles().inv_root_shoup52.data(), t.n_inv_shoup52(),
                 t.last_inv_root_scaled_shoup52());
}

}  // namespace privsearch::ring::detail

#else  // compiler without AVX-512 IFMA: the path is never selected

namespace privsearch::ring::detail {
bool ifma_compiled() { return false; }
void ntt_forward_ifma(const NttTables& t, u64* a) { ntt_forward_scalar(t, a); }
void ntt_inverse_ifma(const NttTables& t, u64* a) { ntt_inverse_scalar(t, a); }
void ntt_forward_mod_down_ifma(const NttTables& t, const ModDownRow& row, u64* scratch) {
  ntt_forward_mod_down_scalar(t, row, scratch);
}
}  // namespace privsearch::ring::detail

#endif
