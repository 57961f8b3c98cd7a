#include "pir/hintless/ring_context.h"

#include <string>

namespace privsearch::pir::hintless {

Result<HintlessRing> HintlessRing::create(const HintlessParams& params) {
  PRIVSEARCH_RETURN_IF_ERROR(check_hintless_params(params));
  HintlessRing r;
  r.params_ = params;
  const std::size_t d = params.d;
  for (u64 q : {params.q_a, params.q_b}) {
    PRIVSEARCH_ASSIGN_OR_RETURN(ring::Modulus m, ring::Modulus::create(q));
    PRIVSEARCH_ASSIGN_OR_RETURN(ring::NttTables t, ring::NttTables::create(d, m));
    r.moduli_.push_back(m);
    r.ntt_.push_back(std::move(t));
  }
  r.q_ = params.q_a * params.q_b;
  for (int l = 1; l <= params.log_d(); ++l) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto perm, ring::GaloisPermutation::create((u64{1} << l) + 1, d));
    r.level_perm_.push_back(std::move(perm));
    std::vector<u64> mono(2 * d, 0);
    for (int i = 0; i < 2; ++i) mono[i * d + (d >> l)] = 1;
    r.forward(mono.data());
    r.monomials_.push_back(std::move(mono));
  }
  // The packing's two-leaf nodes rely on NTT(X^(d/2)) being +I on the first half of the
  // indices and -I on the second (packing.cpp, combine_leaves).
  for (int p = 0; p < 2; ++p) {
    const u64* w = r.monomials_[0].data() + p * d;
    for (std::size_t i = 0; i < d; ++i) {
      const u64 want = i < d / 2 ? w[0] : r.moduli_[p].neg(w[0]);
      if (w[i] != want || r.moduli_[p].mul(w[0], w[0]) != r.moduli_[p].neg(1)) {
        return internal_error("NTT(X^(d/2)) does not have the +-I shape packing assumes");
      }
    }
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(auto conj, ring::GaloisPermutation::create(2 * d - 1, d));
  r.conj_.push_back(std::move(conj));
  const u64 delta = r.q_ / params.p();
  for (int i = 0; i < 2; ++i) {
    const ring::Modulus& m = r.moduli_[i];
    r.d_inv_[i] = m.inv(d % m.value());
    r.delta_[i] = delta % m.value();
    r.ratio_[i] = (u64{1} << 58) / m.value();
  }
  r.qa_inv_mod_qb_ = r.moduli_[1].inv(params.q_a % params.q_b);
  return r;
}

void HintlessRing::forward(u64* poly) const {
  ntt_[0].forward(poly);
  ntt_[1].forward(poly + d());
}

void HintlessRing::inverse(u64* poly) const {
  ntt_[0].inverse(poly);
  ntt_[1].inverse(poly + d());
}

u64 HintlessRing::crt(u64 r_a, u64 r_b) const {
  // x = r_a + q_a * ((r_b - r_a) q_a^-1 mod q_b), which is < q_a q_b.
  const ring::Modulus& mb = moduli_[1];
  const u64 diff = mb.sub(r_b, r_a % mb.value());
  return r_a + params_.q_a * mb.mul(diff, qa_inv_mod_qb_);
}

}  // namespace privsearch::pir::hintless
