// Fused multiply-accumulate kernels for key switching: for one RNS row modulo m,
//   out0[t] = sum_j x_j[perm[t]] * b_j[t],   out1[t] = sum_j x_j[perm[t]] * a_j[t]   (mod m)
// where b_j, a_j are fixed (key) polynomials with precomputed Shoup companions
// b'_j = floor(b_j * 2^64 / m). Each product is a lazy Shoup multiplication in [0, 2m) (any
// x < 2^64), accumulated with a conditional subtraction of 2m, so m < 2^61 keeps every value
// below 2^63. Outputs are fully reduced.
// Two paths with identical results: scalar and AVX-512F/DQ (runtime dispatch, CPUID).
// Thread safety: pure functions. Constant time: data-independent (perm is public).
#pragma once

#include <cstddef>
#include <cstdint>

#include "ring/modulus.h"

namespace privsearch::ring {

struct ShoupDotOperands {
  std::size_t terms = 0;                       // number of j
  const std::uint64_t* const* x = nullptr;     // x[j]: n values (read through perm)
  const std::uint64_t* const* b = nullptr;     // b[j], b_shoup[j], a[j], a_shoup[j]: n values
  const std::uint64_t* const* b_shoup = nullptr;
  const std::uint64_t* const* a = nullptr;
  const std::uint64_t* const* a_shoup = nullptr;
};

// perm may be null (identity). out0/out1: n values each.
void shoup_dot2(const ShoupDotOperands& ops, const std::uint32_t* perm, std::size_t n,
                const Modulus& m, std::uint64_t* out0, std::uint64_t* out1);
void shoup_dot2_scalar(const ShoupDotOperands& ops, const std::uint32_t* perm, std::size_t n,
                       const Modulus& m, std::uint64_t* out0, std::uint64_t* out1);

// Shoup companions of a row: out[t] = floor(w[t] * 2^64 / m).
void shoup_companions(const std::uint64_t* w, std::size_t n, const Modulus& m,
                      std::uint64_t* out);

namespace detail {
bool dot_avx512_compiled();
void shoup_dot2_avx512(const ShoupDotOperands& ops, const std::uint32_t* perm, std::size_t n,
                       const Modulus& m, std::uint64_t* out0, std::uint64_t* out1);
}  // namespace detail

}  // namespace privsearch::ring
