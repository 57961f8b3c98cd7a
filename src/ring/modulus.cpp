#include "ring/modulus.h"

#include <fmt/format.h>

#include <bit>

namespace privsearch::ring {

Result<Modulus> Modulus::create(u64 q) {
  if (q < 2 || q >= (u64{1} << 62)) {
    return invalid_argument_error(fmt::format("modulus `q` = {} is outside [2, 2^62)", q));
  }
  Modulus m;
  m.value_ = q;
  m.bit_count_ = static_cast<int>(std::bit_width(q));
  // floor(2^128 / q) = floor((2^128 - 1) / q) unless q divides 2^128, i.e. q is a power of two.
  const u128 all_ones = ~static_cast<u128>(0);
  u128 r = all_ones / q;
  if ((q & (q - 1)) == 0) r += 1;
  m.ratio_lo_ = static_cast<u64>(r);
  m.ratio_hi_ = static_cast<u64>(r >> 64);
  return m;
}

u64 Modulus::pow(u64 base, u64 exp) const {
  u64 result = 1 % value_;
  base = reduce(base);
  while (exp != 0) {
    if (exp & 1) result = mul(result, base);
    base = mul(base, base);
    exp >>= 1;
  }
  return result;
}

}  // namespace privsearch::ring
