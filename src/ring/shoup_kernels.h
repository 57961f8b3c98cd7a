// Vectorized element-wise kernels with a fixed multiplier (Shoup), used by ModDown, rescaling
// and base conversion. Scalar and AVX-512F/DQ paths with identical results (runtime dispatch).
// Preconditions: q < 2^61; w < q; inputs below 2^63 unless stated.
// Thread safety: pure functions. Constant time: data-independent.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ring/modulus.h"

namespace privsearch::ring {

// out = in * w mod q, fully reduced. in == out allowed.
void mul_scalar_shoup_row(const std::uint64_t* in, std::uint64_t w, std::uint64_t* out,
                          std::size_t n, const Modulus& q);
// acc = (acc + in * w) reduced to [0, 2q); acc must be in [0, 2q) on entry.
void mul_scalar_shoup_acc_lazy_row(const std::uint64_t* in, std::uint64_t w, std::uint64_t* acc,
                                   std::size_t n, const Modulus& q);
// out = (x + c_add - y) * w mod q with x, y < q and c_add < 2q (so the sum is positive and
// below 3q). out == x allowed.
void sub_add_mul_scalar_row(const std::uint64_t* x, const std::uint64_t* y, std::uint64_t c_add,
                            std::uint64_t w, std::uint64_t* out, std::size_t n, const Modulus& q);
// a = a + c mod q for a constant c < q (in place).
void add_constant_row(std::uint64_t* a, std::uint64_t c, std::size_t n, const Modulus& q);
// out = a + b mod q and out = a - b mod q for a, b < q (out may alias a or b).
void add_mod_row(const std::uint64_t* a, const std::uint64_t* b, std::uint64_t* out, std::size_t n,
                 const Modulus& q);
void sub_mod_row(const std::uint64_t* a, const std::uint64_t* b, std::uint64_t* out, std::size_t n,
                 const Modulus& q);
// The centred lift of x in [0, p) (x > p/2 stands for x - p) reduced modulo q:
// out = (x mod q) - (x > p/2 ? p mod q : 0) mod q. in != out not required.
void lift_centered_row(const std::uint64_t* x, std::uint64_t p, std::uint64_t* out, std::size_t n,
                       const Modulus& q);
// out[k] = c[k] mod q for doubles c[k] that are integers with |c[k]| < q.
void signed_doubles_to_residues(const double* c, std::size_t n, std::uint64_t q,
                                std::uint64_t* out);
// a in [0, 2q) -> [0, q) (in place).
void reduce_from_2q_row(std::uint64_t* a, std::size_t n, const Modulus& q);

// u[c] = floor(sum_i t[i*n + c] * inv[i] + 1/2) in double precision, for kf rows of values
// below 2^62 (the rounding quotient of an exact base conversion; see rns.h).
void round_quotient_row(const std::uint64_t* t, const double* inv, std::size_t kf, std::size_t n,
                        std::uint64_t* u);

namespace detail {
bool shoup_avx512_compiled();
void round_quotient_row_avx512(const std::uint64_t* t, const double* inv, std::size_t kf,
                               std::size_t n, std::uint64_t* u);
void add_mod_row_avx512(const std::uint64_t* a, const std::uint64_t* b, std::uint64_t* out,
                        std::size_t n, std::uint64_t q);
void sub_mod_row_avx512(const std::uint64_t* a, const std::uint64_t* b, std::uint64_t* out,
                        std::size_t n, std::uint64_t q);
// Block permutations (ring/automorphism.h): output block h = source block src[h], lane l from
// source lane byte l of lanes[h]; the add form accumulates modulo q (in, out < q).
bool blocks_use_avx512();
void permute_blocks_avx512(const std::uint64_t* in, const std::uint32_t* src,
                           const std::uint64_t* lanes, std::uint64_t* out, std::size_t blocks);
void add_permuted_blocks_avx512(const std::uint64_t* in, const std::uint32_t* src,
                                const std::uint64_t* lanes, std::uint64_t* out, std::size_t blocks,
                                std::uint64_t q);
void signed_doubles_to_residues_avx512(const double* c, std::size_t n, std::uint64_t q,
                                       std::uint64_t* out);
void lift_centered_row_avx512(const std::uint64_t* x, std::uint64_t p, std::uint64_t* out,
                              std::size_t n, std::uint64_t q, std::uint64_t q_shoup_one,
                              std::uint64_t p_mod_q);
void mul_scalar_shoup_row_avx512(const std::uint64_t* in, std::uint64_t w, std::uint64_t ws,
                                 std::uint64_t* out, std::size_t n, std::uint64_t q);
void mul_scalar_shoup_acc_lazy_row_avx512(const std::uint64_t* in, std::uint64_t w,
                                          std::uint64_t ws, std::uint64_t* acc, std::size_t n,
                                          std::uint64_t q);
void sub_add_mul_scalar_row_avx512(const std::uint64_t* x, const std::uint64_t* y,
                                   std::uint64_t c_add, std::uint64_t w, std::uint64_t ws,
                                   std::uint64_t* out, std::size_t n, std::uint64_t q);
void add_constant_row_avx512(std::uint64_t* a, std::uint64_t c, std::size_t n, std::uint64_t q);
void reduce_from_2q_row_avx512(std::uint64_t* a, std::size_t n, std::uint64_t q);
}  // namespace detail

}  // namespace privsearch::ring
