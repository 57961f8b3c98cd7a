// The online hot loops of the hintless backend, each with a scalar reference and an AVX-512
// path (kernels_avx512.cpp) that gives the same words; the path is chosen once from CPUID.
//
// - matvec_rows: sums[r][p] = sum_c D[row r][c] c1_p[c] for up to kMatvecRows rows at once, so
//   every c1 load (8 bytes per column, both primes) serves that many rows: with one row per
//   pass the 256 KB query vector, not the database, was the bottleneck (measured: 4.6 GB/s of D).
//   Exact in 64 bits (entries < 2^14, residues < 2^28, at most 2^22 columns). Paths: AVX-512
//   IFMA (kernels_ifma.cpp), AVX-512 F (kernels_avx512.cpp), scalar; the vector block and why it
//   runs near this machine's streaming bandwidth are in matvec_block.h.
// - pack_butterfly: plus = even + w odd, minus = even + 2q - w odd, from even, odd < 2q and
//   w < q: both in [0, 4q).
// - pack_accumulate: out = reduce(plus + minus' + sum_j digit_j key_j) for t <= 4 digit rows,
//   digits and keys u32 residues < q; all terms sum below 8q + t q^2 < 2^58 (checked with the
//   params) before the one reduction.
// Reduction (lazy): x < 2^58 -> r = x mod q in [0, 2q), 28-bit primes: the Barrett quotient
// floor(floor(x / 2^26) floor(2^58 / q) / 2^32) is at most 2 below floor(x / q), so x - qhat q
// < 3q and one conditional subtraction leaves r < 2q. The packing tree carries values in [0, 2q)
// (inputs below 2^32, as the 32-bit multiplies need) and reduces fully only at the root
// (packing.cpp): two conditional subtractions per coefficient and node fewer than full
// reductions.
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace privsearch::pir::hintless {

inline constexpr std::size_t kMatvecRows = 8;

struct ReduceConstants {
  std::uint64_t q = 0;
  std::uint64_t ratio = 0;  // floor(2^58 / q)
};

// rows: `nrows` (<= kMatvecRows) rows of `columns` entries, `stride` apart; c1a/c1b: one query's
// residues; sums: 2 nrows words, row-major (row r: mod q_a, mod q_b).
void matvec_rows(const std::uint16_t* rows, std::size_t stride, std::size_t nrows,
                 std::size_t columns, const std::uint32_t* c1a, const std::uint32_t* c1b,
                 std::uint64_t* sums);
// Which vector paths this CPU runs (the tests check each against the scalar reference).
struct MatvecPaths {
  bool avx512 = false, ifma = false;
};
MatvecPaths matvec_paths();
void pack_butterfly(const std::uint64_t* even, const std::uint64_t* odd, const std::uint64_t* w,
                    ReduceConstants m, std::size_t d, std::uint64_t* plus, std::uint64_t* minus);
// digit j of coefficient i is digits[j * stride + i], likewise keys.
void pack_accumulate(const std::uint64_t* plus, const std::uint64_t* minus_perm,
                     const std::uint32_t* digits, const std::uint32_t* keys, std::size_t stride,
                     int t, ReduceConstants m, std::size_t count, std::uint64_t* out);

// The same with minus' = tau(minus) read through the Galois permutation's block form
// (ring/automorphism.h: output block h is source block block_source[h], lane l taking source lane
// byte l of block_lanes[h]) instead of from a permuted copy: one pass over the node and one
// 8d-byte array fewer. count: a multiple of 8 (whole blocks from block 0).
void pack_accumulate_permuted(const std::uint64_t* plus, const std::uint64_t* minus,
                              const std::uint32_t* block_source, const std::uint64_t* block_lanes,
                              const std::uint32_t* digits, const std::uint32_t* keys,
                              std::size_t stride, int t, ReduceConstants m, std::size_t count,
                              std::uint64_t* out);

// The same with plus + minus' replaced by one constant `base` < 2q (the nodes over two leaves,
// packing.cpp).
void pack_accumulate_const(std::uint64_t base, const std::uint32_t* digits,
                           const std::uint32_t* keys, std::size_t stride, int t, ReduceConstants m,
                           std::size_t count, std::uint64_t* out);

// Two sibling nodes over two leaves each and their parent's butterfly in one pass (packing.cpp):
//   E = reduce(base_e + sum_j de_j key_j), O = reduce(base_o + sum_j do_j key_j) (both children
//   use the same level-1 key rows), T = reduce(O w), plus = E + T, minus = E + 2q - T:
// the words pack_accumulate_const twice and pack_butterfly give, without storing E and O.
void pack_leaf_pairs_butterfly(std::uint64_t base_e, std::uint64_t base_o,
                               const std::uint32_t* digits_e, const std::uint32_t* digits_o,
                               const std::uint32_t* keys, std::size_t stride, int t,
                               const std::uint64_t* w, ReduceConstants m, std::size_t count,
                               std::uint64_t* plus, std::uint64_t* minus);

// The scalar paths, for the tests of the dispatched ones.
namespace reference_kernels {
void matvec_rows(const std::uint16_t* rows, std::size_t stride, std::size_t nrows,
                 std::size_t columns, const std::uint32_t* c1a, const std::uint32_t* c1b,
                 std::uint64_t* sums);
void pack_butterfly(const std::uint64_t* even, const std::uint64_t* odd, const std::uint64_t* w,
                    ReduceConstants m, std::size_t d, std::uint64_t* plus, std::uint64_t* minus);
void pack_accumulate(const std::uint64_t* plus, const std::uint64_t* minus_perm,
                     const std::uint32_t* digits, const std::uint32_t* keys, std::size_t stride,
                     int t, ReduceConstants m, std::size_t count, std::uint64_t* out);
void pack_accumulate_const(std::uint64_t base, const std::uint32_t* digits,
                           const std::uint32_t* keys, std::size_t stride, int t, ReduceConstants m,
                           std::size_t count, std::uint64_t* out);
void pack_accumulate_permuted(const std::uint64_t* plus, const std::uint64_t* minus,
                              const std::uint32_t* block_source, const std::uint64_t* block_lanes,
                              const std::uint32_t* digits, const std::uint32_t* keys,
                              std::size_t stride, int t, ReduceConstants m, std::size_t count,
                              std::uint64_t* out);
void pack_leaf_pairs_butterfly(std::uint64_t base_e, std::uint64_t base_o,
                               const std::uint32_t* digits_e, const std::uint32_t* digits_o,
                               const std::uint32_t* keys, std::size_t stride, int t,
                               const std::uint64_t* w, ReduceConstants m, std::size_t count,
                               std::uint64_t* plus, std::uint64_t* minus);
}  // namespace reference_kernels

namespace detail {
bool hintless_avx512_compiled();
bool hintless_ifma_compiled();
void matvec_rows_ifma(const std::uint16_t* rows, std::size_t stride, std::size_t nrows,
                      std::size_t columns, const std::uint32_t* c1a, const std::uint32_t* c1b,
                      std::uint64_t* sums);
void matvec_rows_avx512(const std::uint16_t* rows, std::size_t stride, std::size_t nrows,
                        std::size_t columns, const std::uint32_t* c1a, const std::uint32_t* c1b,
                        std::uint64_t* sums);
void pack_butterfly_avx512(const std::uint64_t* even, const std::uint64_t* odd,
                           const std::uint64_t* w, ReduceConstants m, std::size_t d,
                           std::uint64_t* plus, std::uint64_t* minus);
void pack_accumulate_avx512(const std::uint64_t* plus, const std::uint64_t* minus_perm,
                            const std::uint32_t* digits, const std::uint32_t* keys,
                            std::size_t stride, int t, ReduceConstants m, std::size_t count,
                            std::uint64_t* out);
void pack_accumulate_permuted_avx512(const std::uint64_t* plus, const std::uint64_t* minus,
                                     const std::uint32_t* block_source,
                                     const std::uint64_t* block_lanes, const std::uint32_t* digits,
                                     const std::uint32_t* keys, std::size_t stride, int t,
                                     ReduceConstants m, std::size_t count, std::uint64_t* out);
void pack_leaf_pairs_butterfly_avx512(std::uint64_t base_e, std::uint64_t base_o,
                                      const std::uint32_t* digits_e, const std::uint32_t* digits_o,
                                      const std::uint32_t* keys, std::size_t stride, int t,
                                      const std::uint64_t* w, ReduceConstants m, std::size_t count,
                                      std::uint64_t* plus, std::uint64_t* minus);
void pack_accumulate_const_avx512(std::uint64_t base, const std::uint32_t* digits,
                                  const std::uint32_t* keys, std::size_t stride, int t,
                                  ReduceConstants m, std::size_t count, std::uint64_t* out);
}  // namespace detail

}  // namespace privsearch::pir::hintless
