// Polynomial plumbing shared by the ckks objects: NTT over a chosen set of key-basis rows,
// seed expansion of uniform polynomials, and ModDown (division by the special modulus P).
//
// Row sets: a polynomial "at level l over Q" has rows q_0..q_l; "at level l over QP" has rows
// q_0..q_l followed by p_0..p_{k-1}. key_rows(params, level, with_p) lists the key-basis
// indices (into Params::key_moduli()) of those rows.
//
// ModDown (Gentry-Halevi-Smart 2012, hybrid key switching; RNS form as in Bajard et al. 2016 and
// SEAL's `divide_and_round_q_last`): for x over QP,
//   ModDown(x) = (x - Conv_{P->Q}([x]_P)) * P^-1 mod q_i,
// with the exact centred conversion of ring/rns.h, so the result is round(x / P).
// Thread safety: pure functions. Constant time: yes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ckks/params.h"
#include "core/csprng.h"
#include "ring/automorphism.h"
#include "ring/rns_poly.h"

namespace privsearch::ckks {

std::vector<std::size_t> key_rows(const Params& params, std::size_t level, bool with_p);
std::vector<ring::Modulus> moduli_for_rows(const Params& params,
                                           const std::vector<std::size_t>& rows);

// In-place NTT / inverse NTT of every row; rows[i] names the key-basis modulus of row i.
void to_ntt(const Params& params, const std::vector<std::size_t>& rows, ring::RnsPoly& poly);
void from_ntt(const Params& params, const std::vector<std::size_t>& rows, ring::RnsPoly& poly);

// A polynomial whose rows are uniform modulo the given moduli, in NTT form, expanded from
// stream `stream` of `seed`. The same (seed, stream, rows) always gives the same polynomial.
ring::RnsPoly expand_uniform(const Params& params, const std::vector<std::size_t>& rows,
                             const Seed& seed, std::uint64_t stream);

// poly: rows q_0..q_level, p_0..p_{k-1} in NTT form. Result: rows q_0..q_level in NTT form
// holding round-ish(poly / P). q_rows_scaled: poly's q rows already carry P^-1 (extended
// ciphertexts, extended.h).
void mod_down_inplace(const Params& params, std::size_t level, ring::RnsPoly& poly,
                      bool q_rows_scaled = false);
// ModDown in pieces, for callers that produce the rows of x one at a time (the hoisted rotation
// computes each row of its key inner product just before the row is consumed, while it is still
// in L1/L2): write the P rows of x (NTT form) into scratch.p_rows, mod_down_prepare() turns
// them into [x]_P (coefficient form; with several special primes also the rows every target of
// the exact conversion shares, ring/rns.h prepare_centered), then mod_down_row(i) gives out = (x_i
// - Conv_{q_i}([x]_P)) * P^-1 [+ perm(addend)] with the transform fused
// (ring::NttTables::forward_mod_down), or, when x_scaled (the q rows already carry P^-1, as
// key-switching outputs do: galois_keys.h), out = x_i - Conv_{q_i}([x]_P) * P^-1 [+ perm(addend)].
// out may alias x.
struct ModDownScratch {
  std::vector<std::uint64_t> p_rows, conv, transform;
  void resize(const Params& params);
};
void mod_down_prepare(const Params& params, ModDownScratch& scratch);
void mod_down_row(const Params& params, ModDownScratch& scratch, std::size_t i,
                  const std::uint64_t* x, bool x_scaled, std::uint64_t* out,
                  const std::uint64_t* addend, const ring::GaloisPermutation* perm);

}  // namespace privsearch::ckks
