// Hybrid key switching with hoisting (public library).
//
// The data primes are grouped into digits Q_j (Params::num_digits(); one prime each by
// default). For a ciphertext at level l, the hoisted decomposition of c1 is, for each digit
// present at level l,
//   D_j = NTT( lift([c1]_{Q_j}) )  over the rows q_0..q_l, p_0..p_{k-1},
// where lift is the exact centred base conversion of [c1]_{Q_j}, in (-Q_j/2, Q_j/2], to every
// other modulus (centring keeps the digits zero-mean, so the key noise is not amplified).
// Key switching with key (b_j, a_j) computes over Q_l * P
//   (u0, u1) = sum_j D_j * (b_j, a_j),   u0 + u1*s = P * c1 * s' + sum_j D_j e_j,
// and ModDown by P returns (u0, u1)/P in R_{Q_l} with u0 + u1*s ~ c1*s' (noise ~ l*q_j*e/P).
// Hoisting (Halevi-Shoup 2018): sigma_g permutes NTT values and commutes with the lift up to
// adding q_j to some coefficients, which keeps D_j a valid digit (congruent to c1 mod q_j and
// below q_j in size). So one decomposition serves every rotation of the same ciphertext: each
// further rotation is a permutation plus the inner product (and ModDown, unless the caller
// keeps the result in the extended basis: "double hoisting", Bossuat et al. 2021).
// The keys are held in evaluation form (galois_keys.h: q rows times P^-1), so the q rows of
// (u0, u1) computed here are [u * P^-1]_{q_i}; the P rows are u itself. ModDown then reads
// round(u / P) = [u P^-1]_{q_i} - Conv([u]_P) P^-1 with no multiplication on the q rows.
// The permutation is applied while reading the digits (its block form, ring/automorphism.h),
// never materialized.
// Thread safety: pure functions over immutable inputs. Constant time: public data only.
#pragma once

#include <cstddef>
#include <vector>

#include "ckks/ciphertext.h"
#include "ckks/galois_keys.h"
#include "ckks/hoisted_digits.h"
#include "ckks/params.h"
#include "ring/automorphism.h"
#include "ring/rns_poly.h"

namespace privsearch::ckks {

HoistedDigits decompose_for_key_switch(const Params& params, const ring::RnsPoly& c1,
                                       std::size_t level);

// (u0, u1) = sum_j perm(D_j) * (b_j, a_j) over rows q_0..q_l, P (NTT form; q rows times P^-1
// as above); `perm` may be null (identity). Outputs are resized to level + 1 + num_p rows.
void key_switch_inner_product(const Params& params, const HoistedDigits& digits,
                              const ring::GaloisPermutation* perm, const KeySwitchKey& key,
                              ring::RnsPoly& u0, ring::RnsPoly& u1);

// The rotation sigma(ct) = (sigma(c0) + u0/P, u1/P) from a hoisted decomposition of ct's c1
// and the key for sigma, computed row by row: the P rows of (u0, u1) first, then each q row is
// produced and fed to the fused ModDown while it is still in cache (u0, u1 are never stored
// whole). Same result as key_switch_inner_product, mod_down_inplace(q_rows_scaled) and adding
// sigma(c0).
void key_switch_rotate(const Params& params, const HoistedDigits& digits,
                       const ring::GaloisPermutation& perm, const KeySwitchKey& key,
                       const ring::RnsPoly& c0, ring::RnsPoly& out0, ring::RnsPoly& out1);

}  // namespace privsearch::ckks
