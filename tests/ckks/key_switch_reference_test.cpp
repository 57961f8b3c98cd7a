// The rotation path (keys in evaluation form, digits read through the block permutation, the
// inner product row by row, ModDown fused into the transform) against a slow reference that
// uses none of it: canonical keys, 128-bit modular arithmetic, the scalar transform and ModDown
// by its definition round((u - [u]_P) / P). Results must agree bit for bit.
#include <gtest/gtest.h>

#include "ckks/internal/key_switch.h"
#include "ckks/internal/poly_util.h"
#include "ckks_fixture.h"
#include "testing/reference.h"

namespace privsearch::ckks {
namespace {

using testing::CkksKit;
using testing::ref_mulmod;
using u128 = unsigned __int128;

// [P]_{q} as a signed 128-bit centred value reduced modulo q.
std::uint64_t mod_signed(__int128 v, std::uint64_t q) {
  __int128 r = v % static_cast<__int128>(q);
  return static_cast<std::uint64_t>(r < 0 ? r + q : r);
}

Ciphertext reference_rotation(const Params& params, const Ciphertext& ct, std::uint64_t galois_elt,
                              const KeySwitchKey& key) {
  const std::size_t n = params.n(), level = ct.level(), nq = level + 1, np = params.num_p();
  const auto rows = key_rows(params, level, true);
  const auto digits = decompose_for_key_switch(params, ct.c1(), level);
  const auto perm = *ring::GaloisPermutation::create(galois_elt, n);
  const auto a = expand_key_switch_uniform(params, key.seed());
  // u = sum_j sigma(D_j) * (b_j, a_j) over Q_l P, canonical keys.
  ring::RnsPoly u[2] = {ring::RnsPoly(n, rows.size(), true), ring::RnsPoly(n, rows.size(), true)};
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const std::uint64_t q = params.key_moduli()[rows[r]].value();
    for (std::size_t j = 0; j < digits.digits.size(); ++j) {
      const auto b = key.b(params, j);
      for (std::size_t t = 0; t < n; ++t) {
        const std::uint64_t x = digits.digits[j].row(r)[perm.table()[t]];
        u[0].row(r)[t] = (u[0].row(r)[t] + ref_mulmod(x, b.row(rows[r])[t], q)) % q;
        u[1].row(r)[t] = (u[1].row(r)[t] + ref_mulmod(x, a[j].row(rows[r])[t], q)) % q;
      }
    }
  }
  // ModDown by definition: [u]_P centred (CRT over the special primes in 128 bits), then
  // (u - [u]_P) * P^-1 on every q row.
  ring::RnsPoly out[2] = {ring::RnsPoly(n, nq, true), ring::RnsPoly(n, nq, true)};
  for (int c = 0; c < 2; ++c) {
    std::vector<std::vector<std::uint64_t>> coeff(np);
    for (std::size_t j = 0; j < np; ++j) {
      coeff[j].assign(u[c].row(nq + j), u[c].row(nq + j) + n);
      params.ntt(params.num_q() + j).inverse(coeff[j].data(), ring::NttPath::kScalar);
    }
    u128 big_p = 1;
    for (std::size_t j = 0; j < np; ++j) big_p *= params.key_moduli()[params.num_q() + j].value();
    std::vector<__int128> centred(n);
    for (std::size_t t = 0; t < n; ++t) {
      // Garner: X = y_0 + p_0 * ((y_1 - y_0) * p_0^-1 mod p_1) (np <= 2 in every preset).
      u128 x = coeff[0][t];
      if (np == 2) {
        const std::uint64_t p0 = params.key_moduli()[params.num_q()].value();
        const std::uint64_t p1 = params.key_moduli()[params.num_q() + 1].value();
        const std::uint64_t inv = testing::ref_powmod(p0 % p1, p1 - 2, p1);
        const std::uint64_t d = (coeff[1][t] + p1 - coeff[0][t] % p1) % p1;
        x += static_cast<u128>(p0) * ref_mulmod(d, inv, p1);
      }
      centred[t] = x > big_p / 2 ? static_cast<__int128>(x) - static_cast<__int128>(big_p)
                                 : static_cast<__int128>(x);
    }
    for (std::size_t i = 0; i < nq; ++i) {
      const std::uint64_t q = params.key_moduli()[i].value();
      std::vector<std::uint64_t> lifted(n);
      for (std::size_t t = 0; t < n; ++t) lifted[t] = mod_signed(centred[t], q);
      params.ntt(i).forward(lifted.data(), ring::NttPath::kScalar);
      const std::uint64_t p_inv =
          testing::ref_powmod(static_cast<std::uint64_t>(big_p % q), q - 2, q);
      for (std::size_t t = 0; t < n; ++t) {
        std::uint64_t v = ref_mulmod((u[c].row(i)[t] + q - lifted[t]) % q, p_inv, q);
        if (c == 0) v = (v + ct.c0().row(i)[perm.table()[t]]) % q;  // + sigma(c0)
        out[c].row(i)[t] = v;
      }
    }
  }
  return Ciphertext(params.id(), level, ct.scale(), std::move(out[0]), std::move(out[1]));
}

TEST(KeySwitchReference, RotationsMatchTheSlowReferenceBitForBit) {
  const std::vector<Params> all = {
      testing::insecure_params(64), *Params::create(paper_n8192_literal()),
      *Params::create(ifma_n8192_literal()), *Params::create(rerank_n8192_literal())};
  for (const auto& params : all) {
    CkksKit kit(params, 330);
    const std::vector<int> steps = {1, 5, -3};
    const auto gk = *kit.keygen.create_galois_keys(kit.sk, steps, true, kit.prng);
    for (std::size_t level : {std::size_t{0}, params.max_level()}) {
      const auto ct = kit.encrypt(testing::random_values(kit.prng, params.slots()), level);
      const auto h = *kit.evaluator.hoist(ct);
      for (int step : steps) {
        const std::uint64_t g =
            ring::galois_elt_for_step(normalize_step(step, params.slots()), params.n());
        const auto expected = reference_rotation(params, ct, g, **gk.key_for_elt(g));
        EXPECT_EQ(*kit.evaluator.rotate_hoisted(h, step, gk), expected)
            << params.name() << " level " << level << " step " << step;
        // Double hoisting defers the same ModDown: one extended rotation brought down by
        // mod_down is the same ciphertext.
        EXPECT_EQ(*kit.evaluator.mod_down(*kit.evaluator.rotate_hoisted_extended(h, step, gk)),
                  expected)
            << params.name() << " level " << level << " step " << step << " (extended)";
      }
      const std::uint64_t conj = ring::galois_elt_conjugate(params.n());
      EXPECT_EQ(*kit.evaluator.conjugate(ct, gk),
                reference_rotation(params, ct, conj, **gk.key_for_elt(conj)))
          << params.name() << " conjugation";
    }
  }
}

}  // namespace
}  // namespace privsearch::ckks
