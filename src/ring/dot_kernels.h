// Fused multiply-accumulate kernels for key switching: for one RNS row modulo m,
//   out0[t] = sum_j x_j[perm[t]] * b_j[t],   out1[t] = sum_j x_j[perm[t]] * a_j[t]   (mod m)
// where b_j, a_j are fixed (key) polynomials with precomputed Shoup companions
// b'_j = floor(b_j * 2^64 / m). Rows the IFMA kernel handles (m < 2^50 on a CPU with AVX-512
// IFMA) instead use the Montgomery form b'_j = b_j * 2^52 mod m, and the kernel reads only
// b'_j and a'_j (Montgomery reduction of x * b'_j gives x * b_j): half the key bytes per
// product, which matters because key switching streams megabytes of keys per request; the
// products are summed unreduced (low and high 52-bit halves) and reduced once per three terms.
// shoup_companions() computes the form the dispatcher expects. Elsewhere each product is a lazy
// Shoup multiplication in [0, 2m), accumulated with a conditional subtraction of 2m, so
// m < 2^61 keeps every value below 2^63. Inputs x < m; outputs are fully reduced.
// Three paths with identical results: scalar, AVX-512F/DQ and AVX-512 IFMA (runtime dispatch).
// Thread safety: pure functions. Constant time: data-independent (perm is public).
#pragma once

#include <cstddef>
#include <cstdint>

#include "ring/automorphism.h"
#include "ring/modulus.h"

namespace privsearch::ring {

struct ShoupDotOperands {
  std::size_t terms = 0;                    // number of j
  const std::uint64_t* const* x = nullptr;  // x[j]: n values (read through perm)
  const std::uint64_t* const* b = nullptr;  // b[j], b_shoup[j], a[j], a_shoup[j]: n values
  const std::uint64_t* const* b_shoup = nullptr;
  const std::uint64_t* const* a = nullptr;
  const std::uint64_t* const* a_shoup = nullptr;
};

// True if rows modulo m use the IFMA kernel (and 52-bit companions).
bool dot_uses_ifma(const Modulus& m);

// perm may be null (identity); otherwise perm->n() == n and the SIMD paths read x through its
// block form (a load and one lane shuffle per eight values). out0/out1: n values each.
void shoup_dot2(const ShoupDotOperands& ops, const GaloisPermutation* perm, std::size_t n,
                const Modulus& m, std::uint64_t* out0, std::uint64_t* out1);
// Reference path; always takes 64-bit companions.
void shoup_dot2_scalar(const ShoupDotOperands& ops, const GaloisPermutation* perm, std::size_t n,
                       const Modulus& m, std::uint64_t* out0, std::uint64_t* out1);

// Shoup companions of a row in the form shoup_dot2 expects for m.
void shoup_companions(const std::uint64_t* w, std::size_t n, const Modulus& m, std::uint64_t* out);

namespace detail {
bool dot_avx512_compiled();
bool dot_ifma_compiled();
void shoup_dot2_ifma(const ShoupDotOperands& ops, const GaloisPermutation* perm, std::size_t n,
                     const Modulus& m, std::uint64_t* out0, std::uint64_t* out1);
void shoup_dot2_avx512(const ShoupDotOperands& ops, const GaloisPermutation* perm, std::size_t n,
                       const Modulus& m, std::uint64_t* out0, std::uint64_t* out1);
}  // namespace detail

}  // namespace privsearch::ring
