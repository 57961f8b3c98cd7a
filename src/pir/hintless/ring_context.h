// The two-prime ring of the hintless backend: R_q = Z_q[X]/(X^d + 1), q = q_a q_b, in RNS form.
//
// A polynomial is 2d words: d residues mod q_a, then d residues mod q_b ("Poly2"), in NTT form
// (ring/ntt.h's bit-reversed evaluation order) unless a name says otherwise. Residues are below
// 2^28, so a product of two residues is below 2^56 and sums of up to 256 such products fit a
// 64-bit word before one reduction (`reduce`).
// The context also holds what packing needs: the Galois permutations of tau_{2^l + 1} (l = 1 ..
// log d) and of the conjugation X -> X^-1, the monomials X^(d / 2^l) in NTT form, d^-1 and
// Delta = floor(q / p) per prime, and the CRT to [0, q).
// Thread safety: immutable after create().
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/status.h"
#include "pir/hintless/params.h"
#include "ring/automorphism.h"
#include "ring/modulus.h"
#include "ring/ntt.h"

namespace privsearch::pir::hintless {

using u64 = std::uint64_t;
using u32 = std::uint32_t;

class HintlessRing {
 public:
  static Result<HintlessRing> create(const HintlessParams& params);

  const HintlessParams& params() const { return params_; }
  std::size_t d() const { return params_.d; }
  int log_d() const { return params_.log_d(); }
  const ring::Modulus& modulus(int prime) const { return moduli_[prime]; }
  u64 prime(int i) const { return moduli_[i].value(); }
  u64 q() const { return q_; }
  const ring::NttTables& ntt(int prime) const { return ntt_[prime]; }

  // In place on a Poly2 (both halves).
  void forward(u64* poly) const;
  void inverse(u64* poly) const;

  // tau_{2^l + 1} for l in [1, log d], and X -> X^(2d - 1).
  const ring::GaloisPermutation& level_automorphism(int level) const {
    return level_perm_[level - 1];
  }
  const ring::GaloisPermutation& conjugation() const { return conj_.front(); }
  // NTT(X^(d / 2^l)) as a Poly2, l in [1, log d].
  const u64* level_monomial(int level) const { return monomials_[level - 1].data(); }

  u64 d_inverse(int prime) const { return d_inv_[prime]; }
  u64 delta(int prime) const { return delta_[prime]; }  // floor(q / p) mod q_i
  u64 delta() const { return q_ / params_.p(); }

  // x in [0, q) from its residues (exact: q < 2^56).
  u64 crt(u64 r_a, u64 r_b) const;

  // x mod q_i for x < 2^58 (products of residues and their short sums), branch-free:
  // qhat = floor(floor(x / 2^26) * floor(2^58 / q_i) / 2^32) is at most 2 below floor(x / q_i)
  // for 2^27 < q_i < 2^28 (kernels.h), so two conditional subtractions reach [0, q_i).
  static u64 reduce(u64 x, u64 q, u64 ratio) {
    const u64 qhat = ((x >> 26) * ratio) >> 32;
    u64 r = x - qhat * q;
    for (int i = 0; i < 2; ++i) r = ring::reduce_once(r, q);
    return r;
  }
  u64 ratio(int prime) const { return ratio_[prime]; }

 private:
  HintlessRing() = default;
  HintlessParams params_;
  std::vector<ring::Modulus> moduli_;
  std::vector<ring::NttTables> ntt_;
  std::vector<ring::GaloisPermutation> level_perm_;
  std::vector<ring::GaloisPermutation> conj_;  // one element
  std::vector<std::vector<u64>> monomials_;
  u64 q_ = 0;
  u64 d_inv_[2] = {0, 0};
  u64 delta_[2] = {0, 0};
  u64 ratio_[2] = {0, 0};
  u64 qa_inv_mod_qb_ = 0;
};

}  // namespace privsearch::pir::hintless
