// Word-size modular arithmetic for NTT-friendly primes q < 2^62.
//
// Barrett reduction (Barrett 1986; SEAL's 128-bit variant): with R = floor(2^128 / q), the
// estimate qhat = floor(x * R / 2^128) satisfies floor(x/q) - 1 <= qhat <= floor(x/q), so
// x - qhat*q lies in [0, 2q) and one conditional subtraction finishes.
// Shoup multiplication by a fixed w (Shoup, NTL; Harvey 2014): with w' = floor(w * 2^64 / q),
// x*w - floor(x*w'/2^64)*q lies in [0, 2q) for every x < 2^64 ("lazy" result).
// All functions are constant time in their arguments (no secret-dependent branches: the
// conditional subtractions compile to cmov/masks).
// Thread safety: Modulus is immutable.
#pragma once

#include <cstdint>

#include "core/status.h"

namespace privsearch::ring {

using u64 = std::uint64_t;
using u128 = unsigned __int128;

// The 128-bit product of two words from four 32 x 32 -> 64-bit products (schoolbook on 32-bit
// halves: a b = a1 b1 2^64 + (a1 b0 + a0 b1) 2^32 + a0 b0, the middle sum carried exactly).
// WebAssembly multiplies 64-bit words but has no high half, and clang lowers a u128 product
// there to a libcall (__multi3): the browser client uses this. Tests compare it with u128.
inline u128 mul_wide_limbs(u64 a, u64 b) {
  const u64 a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
  const u64 p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const u64 mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
  const u64 lo = (mid << 32) | (p00 & 0xffffffffu);
  const u64 hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
  return (static_cast<u128>(hi) << 64) | lo;
}

inline u128 mul_wide(u64 a, u64 b) {
#if defined(__wasm__)
  return mul_wide_limbs(a, b);
#else
  return static_cast<u128>(a) * b;  // one MULX natively
#endif
}

inline u64 mul_hi(u64 a, u64 b) { return static_cast<u64>(mul_wide(a, b) >> 64); }

// x >= q ? x - q : x, branch-free. Precondition: x < 2q.
inline u64 reduce_once(u64 x, u64 q) {
  const u64 t = x - q;
  return t + (q & (u64{0} - (t >> 63)));
}

class Modulus {
 public:
  // q must satisfy 2 <= q < 2^62 (kInvalidArgument otherwise). Primality is not required here.
  static Result<Modulus> create(u64 q);

  u64 value() const { return value_; }
  int bit_count() const { return bit_count_; }

  // x mod q for any 64-bit x: qhat = floor(x * floor(2^64/q) / 2^64) is at most one below
  // floor(x/q), so one conditional subtraction finishes.
  u64 reduce(u64 x) const { return reduce_once(x - mul_hi(x, ratio_hi_) * value_, value_); }
  // x mod q for any 128-bit x.
  u64 reduce_u128(u128 x) const {
    const u64 x0 = static_cast<u64>(x);
    const u64 x1 = static_cast<u64>(x >> 64);
    // high 64 bits of the middle sum; exact floor as argued in the header comment
    const u128 mid = mul_wide(x1, ratio_lo_) + mul_wide(x0, ratio_hi_) + mul_hi(x0, ratio_lo_);
    const u64 qhat = x1 * ratio_hi_ + static_cast<u64>(mid >> 64);
    return reduce_once(x0 - qhat * value_, value_);
  }
  // a*b mod q, a, b < q.
  u64 mul(u64 a, u64 b) const { return reduce_u128(mul_wide(a, b)); }
  // a+b mod q, a, b < q.
  u64 add(u64 a, u64 b) const { return reduce_once(a + b, value_); }
  // a-b mod q, a, b < q.
  u64 sub(u64 a, u64 b) const { return reduce_once(a + value_ - b, value_); }
  // -a mod q, a < q.
  u64 neg(u64 a) const { return reduce_once(value_ - a, value_); }
  // Signed integer to [0, q), branch-free (used on message and noise coefficients).
  u64 from_signed(std::int64_t x) const {
    const u64 sign = static_cast<u64>(x) >> 63;
    const u64 mask = u64{0} - sign;
    const u64 r = reduce((static_cast<u64>(x) ^ mask) + sign);  // |x|, also for INT64_MIN
    const u64 neg_r = reduce_once(value_ - r, value_);
    return (neg_r & mask) | (r & ~mask);
  }
  // WARNING: not constant time in the exponent; public exponents only.
  u64 pow(u64 base, u64 exp) const;
  // Inverse of a modulo a prime q (Fermat). WARNING: public values only.
  u64 inv(u64 a) const { return pow(a, value_ - 2); }

  // w' = floor(w * 2^64 / q) for Shoup multiplication; w < q.
  u64 shoup(u64 w) const { return static_cast<u64>((static_cast<u128>(w) << 64) / value_); }
  // x*w mod q in [0, 2q) for any x (lazy Shoup).
  u64 mul_shoup_lazy(u64 x, u64 w, u64 w_shoup) const {
    const u64 qhat = mul_hi(x, w_shoup);
    return x * w - qhat * value_;
  }
  u64 mul_shoup(u64 x, u64 w, u64 w_shoup) const {
    return reduce_once(mul_shoup_lazy(x, w, w_shoup), value_);
  }

  bool operator==(const Modulus& o) const { return value_ == o.value_; }

 private:
  Modulus() = default;
  u64 value_ = 0;
  int bit_count_ = 0;
  u64 ratio_lo_ = 0;  // R = floor(2^128 / q) = ratio_hi_ * 2^64 + ratio_lo_
  u64 ratio_hi_ = 0;
};

}  // namespace privsearch::ring
