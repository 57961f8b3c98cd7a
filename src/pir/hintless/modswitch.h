// The split modulus switch of a packed output (YPIR Lemma 2.4, after Spiral): the a-part to
// q~_a = q_a (28 bits) and the b-part to q~_b = 2^20, and the client's decoding (Lemma 2.3):
//   a' = round(a q_a / q) = round(a / q_b) mod q_a,   b' = round(b 2^20 / q) mod 2^20,
//   v  = b' - round((s a' mod q_a) 2^20 / q_a) mod 2^20,   m = round(v p / 2^20) mod p.
// Inputs are Poly2s in coefficient form. Thread safety: pure functions.
#pragma once

#include "pir/hintless/ring_context.h"

namespace privsearch::pir::hintless {

void switch_a_part(const HintlessRing& ring, const u64* coeff, u32* out);
void switch_b_part(const HintlessRing& ring, const u64* coeff, u32* out);
// One decoded entry from b' and (s a' mod q_a) at the same coefficient.
inline std::uint16_t decode_entry(const HintlessParams& p, u32 b_switched, u64 s_times_a) {
  const u64 qb = u64{1} << p.response_b_bits;
  const u64 scaled = ((s_times_a << p.response_b_bits) + p.q_a / 2) / p.q_a;  // < 2^48: exact
  const u64 v = (b_switched + qb - (scaled & (qb - 1))) & (qb - 1);
  const int shift = p.response_b_bits - p.p_bits;
  return static_cast<std::uint16_t>(((v + (u64{1} << (shift - 1))) >> shift) & (p.p() - 1));
}

}  // namespace privsearch::pir::hintless
