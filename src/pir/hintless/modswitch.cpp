#include "pir/hintless/modswitch.h"

namespace privsearch::pir::hintless {

void switch_a_part(const HintlessRing& ring, const u64* coeff, u32* out) {
  const std::size_t d = ring.d();
  const u64 qa = ring.prime(0), qb = ring.prime(1);
  for (std::size_t i = 0; i < d; ++i) {
    const u64 x = ring.crt(coeff[i], coeff[d + i]);
    const u64 r = (x + qb / 2) / qb;  // <= q_a; q_a itself is 0
    out[i] = static_cast<u32>(r == qa ? 0 : r);
  }
}

void switch_b_part(const HintlessRing& ring, const u64* coeff, u32* out) {
  const std::size_t d = ring.d();
  const int bits = ring.params().response_b_bits;
  const unsigned __int128 q = ring.q();
  for (std::size_t i = 0; i < d; ++i) {
    const unsigned __int128 x = ring.crt(coeff[i], coeff[d + i]);
    const u64 r = static_cast<u64>(((x << bits) + q / 2) / q);
    out[i] = static_cast<u32>(r & ((u64{1} << bits) - 1));
  }
}

}  // namespace privsearch::pir::hintless
