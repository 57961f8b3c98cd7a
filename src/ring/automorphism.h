// Ring automorphisms sigma_g: X -> X^g of Z_q[X]/(X^n + 1) for odd g (Galois elements).
//
// Rotation of CKKS slots by k positions to the left is sigma_g with g = 5^k mod 2n (the slots
// are ordered by powers of 5, as in SEAL); conjugation is g = 2n - 1.
// Coefficient form: a_j X^j -> a_j X^(jg mod 2n), with X^n = -1 giving a sign.
// NTT form (see ntt.h): index i holds a(psi^(e_i)), e_i = 2 brv(i) + 1, and
// sigma_g(a)(psi^e) = a(psi^(e g)), so sigma_g permutes the NTT values: no arithmetic at all.
// Thread safety: immutable tables. Constant time: data-independent indices.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/status.h"
#include "ring/modulus.h"

namespace privsearch::ring {

// 5^step mod 2n for any integer step (negative = rotate right); the group <5> has order n/2.
std::uint64_t galois_elt_for_step(int step, std::size_t n);
// 2n - 1.
inline std::uint64_t galois_elt_conjugate(std::size_t n) { return 2 * n - 1; }
// The step k with 5^k = g, if g is in <5> (kNotFound otherwise).
Result<int> step_for_galois_elt(std::uint64_t galois_elt, std::size_t n);

// out = sigma_g(in) in coefficient form; in != out.
void apply_galois_coeff(const std::uint64_t* in, std::uint64_t galois_elt, const Modulus& q,
                        std::uint64_t* out, std::size_t n);

// Precomputed NTT-domain permutation for one Galois element.
//
// The permutation is far from arbitrary: write i = 8h + l (l < 8). Then
//   e_i = 2 brv(i) + 1 = brv_3(l) * n/4 + (2 brv'(h) + 1)        (brv' over log n - 3 bits)
// and e_i g mod 2n = g (2 brv'(h) + 1) + (g brv_3(l) mod 8) * n/4 mod 2n: the lanes l of one
// block differ only in the top three bits of the exponent, i.e. in the low three bits of the
// source index after the bit reversal. So output block h is ONE source block with its eight lanes
// shuffled, which the AVX-512 path applies as a load plus one vpermq (no gather: Zen 4's
// vpgatherqq made sigma_g ~4x slower). create() checks the structure rather than trusting it.
class GaloisPermutation {
 public:
  static Result<GaloisPermutation> create(std::uint64_t galois_elt, std::size_t n);
  std::uint64_t galois_elt() const { return galois_elt_; }
  std::size_t n() const { return perm_.size(); }
  // out[i] = in[perm[i]]; in != out.
  void apply(const std::uint64_t* in, std::uint64_t* out) const;
  // out[i] = out[i] + in[perm[i]] mod q for in, out < q; in != out.
  void apply_add(const std::uint64_t* in, std::uint64_t* out, const Modulus& q) const;
  const std::vector<std::uint32_t>& table() const { return perm_; }
  // Block form (empty when n < 8): output block h is source block block_source()[h], output
  // lane l taking source lane byte l of block_lanes()[h].
  const std::vector<std::uint32_t>& block_source() const { return block_source_; }
  const std::vector<std::uint64_t>& block_lanes() const { return block_lanes_; }

 private:
  GaloisPermutation() = default;
  std::uint64_t galois_elt_ = 0;
  std::vector<std::uint32_t> perm_;
  std::vector<std::uint32_t> block_source_;
  std::vector<std::uint64_t> block_lanes_;
};

}  // namespace privsearch::ring
