// Slow, obviously-correct reference implementations for tests. Never used by src/.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <vector>

namespace privsearch::testing {

using u64 = std::uint64_t;
using u128 = unsigned __int128;

inline u64 ref_mulmod(u64 a, u64 b, u64 q) { return static_cast<u64>((u128)a * b % q); }
inline u64 ref_powmod(u64 b, u64 e, u64 q) {
  u64 r = 1 % q;
  for (; e; e >>= 1, b = ref_mulmod(b, b, q)) {
    if (e & 1) r = ref_mulmod(r, b, q);
  }
  return r;
}
inline std::size_t ref_bitrev(std::size_t x, int bits) {
  std::size_t r = 0;
  for (int i = 0; i < bits; ++i) r |= ((x >> i) & 1) << (bits - 1 - i);
  return r;
}

// out[i] = a(psi^(2 brv(i) + 1)) by direct evaluation: O(n^2).
inline std::vector<u64> ref_ntt(const std::vector<u64>& a, u64 psi, u64 q) {
  const std::size_t n = a.size();
  int bits = 0;
  while ((std::size_t{1} << bits) < n) ++bits;
  std::vector<u64> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const u64 x = ref_powmod(psi, 2 * ref_bitrev(i, bits) + 1, q);
    u64 acc = 0, xp = 1;
    for (std::size_t j = 0; j < n; ++j) {
      acc = (acc + ref_mulmod(a[j], xp, q)) % q;
      xp = ref_mulmod(xp, x, q);
    }
    out[i] = acc;
  }
  return out;
}

// Schoolbook product in Z_q[X]/(X^n + 1).
inline std::vector<u64> ref_negacyclic_mul(const std::vector<u64>& a, const std::vector<u64>& b,
                                           u64 q) {
  const std::size_t n = a.size();
  std::vector<u64> out(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      const u64 p = ref_mulmod(a[i], b[j], q);
      const std::size_t k = i + j;
      if (k < n) {
        out[k] = (out[k] + p) % q;
      } else {
        out[k - n] = (out[k - n] + q - p) % q;
      }
    }
  }
  return out;
}

// Slot j of the canonical embedding: m(zeta^(5^j mod 2n)), zeta = exp(i pi / n), by direct
// evaluation of the real coefficients m (already divided by the scale).
inline std::vector<std::complex<double>> ref_embed(const std::vector<double>& m) {
  const std::size_t n = m.size();
  std::vector<std::complex<double>> out(n / 2);
  u64 g = 1;
  for (std::size_t j = 0; j < n / 2; ++j) {
    std::complex<double> acc = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const double angle =
          std::numbers::pi * static_cast<double>((g * k) % (2 * n)) / static_cast<double>(n);
      acc += m[k] * std::complex<double>(std::cos(angle), std::sin(angle));
    }
    out[j] = acc;
    g = (g * 5) % (2 * n);
  }
  return out;
}

}  // namespace privsearch::testing
