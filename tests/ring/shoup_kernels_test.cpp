#include "ring/shoup_kernels.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "core/csprng.h"
#include "ring/dot_kernels.h"
#include "ring/ntt.h"
#include "ring/rns_poly.h"
#include "testing/reference.h"

namespace privsearch::ring {
namespace {

std::vector<u64> random_row(Prng& p, std::size_t n, u64 bound) {
  std::vector<u64> v(n);
  for (auto& x : v) x = p.uniform_below(bound);
  return v;
}

class ShoupKernels : public ::testing::TestWithParam<u64> {};

TEST_P(ShoupKernels, MatchPlainModularArithmetic) {
  const u64 qv = GetParam();
  const auto q = *Modulus::create(qv);
  Prng prng = Prng::from_seed(Seed{}, 71);
  const std::size_t n = 64;
  const auto x = random_row(prng, n, qv), y = random_row(prng, n, qv);
  const auto big = random_row(prng, n, u64{1} << 62);
  const u64 w = prng.uniform_below(qv), c = prng.uniform_below(qv);

  std::vector<u64> out(n);
  mul_scalar_shoup_row(big.data(), w, out.data(), n, q);
  for (std::size_t t = 0; t < n; ++t) ASSERT_EQ(out[t], testing::ref_mulmod(big[t] % qv, w, qv));

  std::vector<u64> acc = x;  // in [0, q) subset of [0, 2q)
  mul_scalar_shoup_acc_lazy_row(y.data(), w, acc.data(), n, q);
  for (std::size_t t = 0; t < n; ++t) {
    ASSERT_LT(acc[t], 2 * qv);
    ASSERT_EQ(acc[t] % qv, (x[t] + testing::ref_mulmod(y[t], w, qv)) % qv);
  }

  sub_add_mul_scalar_row(x.data(), y.data(), qv + c, w, out.data(), n, q);
  for (std::size_t t = 0; t < n; ++t) {
    const u64 inner = (x[t] + qv + c - y[t]) % qv;
    ASSERT_EQ(out[t], testing::ref_mulmod(inner, w, qv));
  }

  std::vector<u64> a = x;
  add_constant_row(a.data(), c, n, q);
  for (std::size_t t = 0; t < n; ++t) ASSERT_EQ(a[t], (x[t] + c) % qv);

  // Centred lift from a larger and from a smaller prime.
  for (u64 p : {u64{(1ULL << 61) - 1}, u64{1009}}) {
    std::vector<u64> in = random_row(prng, n, p), lifted(n);
    in[0] = p / 2;
    in[1] = p / 2 + 1;
    lift_centered_row(in.data(), p, lifted.data(), n, q);
    for (std::size_t t = 0; t < n; ++t) {
      const __int128 v = in[t] > p / 2 ? static_cast<__int128>(in[t]) - p : in[t];
      __int128 e = v % static_cast<__int128>(qv);
      if (e < 0) e += qv;
      ASSERT_EQ(lifted[t], static_cast<u64>(e)) << p << " " << t;
    }
  }

  std::vector<u64> r(n);
  for (std::size_t t = 0; t < n; ++t) r[t] = x[t] + (t % 2) * qv;
  reduce_from_2q_row(r.data(), n, q);
  EXPECT_EQ(r, x);
}

TEST_P(ShoupKernels, DotProductPathsAgree) {
  const u64 qv = GetParam();
  const auto q = *Modulus::create(qv);
  Prng prng = Prng::from_seed(Seed{}, 72);
  // Five terms: the IFMA kernel reduces once per group of three, so a full and a partial group;
  // the first values are all q - 1 (the largest unreduced sums).
  const std::size_t n = 64, terms = 5;
  std::vector<std::vector<u64>> x, b, bs, a, as, bs64, as64;
  for (std::size_t j = 0; j < terms; ++j) {
    x.push_back(random_row(prng, n, qv));
    b.push_back(random_row(prng, n, qv));
    a.push_back(random_row(prng, n, qv));
    for (std::size_t t = 0; t < 8; ++t) x[j][t] = b[j][t] = a[j][t] = qv - 1;
    bs.emplace_back(n);
    as.emplace_back(n);
    shoup_companions(b[j].data(), n, q, bs[j].data());  // the dispatcher's form
    shoup_companions(a[j].data(), n, q, as[j].data());
    bs64.emplace_back(n);
    as64.emplace_back(n);
    for (std::size_t t = 0; t < n; ++t) {
      bs64[j][t] = q.shoup(b[j][t]);
      as64[j][t] = q.shoup(a[j][t]);
    }
  }
  std::vector<const u64*> px, pb, pbs, pa, pas, pbs64, pas64;
  for (std::size_t j = 0; j < terms; ++j) {
    px.push_back(x[j].data());
    pb.push_back(b[j].data());
    pbs.push_back(bs[j].data());
    pa.push_back(a[j].data());
    pas.push_back(as[j].data());
    pbs64.push_back(bs64[j].data());
    pas64.push_back(as64[j].data());
  }
  const ShoupDotOperands ops{terms, px.data(), pb.data(), pbs.data(), pa.data(), pas.data()};
  const ShoupDotOperands ops64{terms, px.data(), pb.data(), pbs64.data(), pa.data(), pas64.data()};
  // Identity, a rotation and the conjugation (the SIMD paths read x through the block form).
  std::vector<std::optional<GaloisPermutation>> perms;
  perms.emplace_back();
  perms.emplace_back(*GaloisPermutation::create(galois_elt_for_step(3, n), n));
  perms.emplace_back(*GaloisPermutation::create(galois_elt_conjugate(n), n));
  for (const auto& perm : perms) {
    const GaloisPermutation* p = perm ? &*perm : nullptr;
    std::vector<u64> o0(n), o1(n), s0(n), s1(n);
    shoup_dot2(ops, p, n, q, o0.data(), o1.data());
    shoup_dot2_scalar(ops64, p, n, q, s0.data(), s1.data());
    EXPECT_EQ(o0, s0);
    EXPECT_EQ(o1, s1);
    for (std::size_t t = 0; t < n; ++t) {
      const std::size_t src = p != nullptr ? p->table()[t] : t;
      u64 e0 = 0, e1 = 0;
      for (std::size_t j = 0; j < terms; ++j) {
        e0 = (e0 + testing::ref_mulmod(x[j][src], b[j][t], qv)) % qv;
        e1 = (e1 + testing::ref_mulmod(x[j][src], a[j][t], qv)) % qv;
      }
      ASSERT_EQ(s0[t], e0);
      ASSERT_EQ(s1[t], e1);
    }
  }
}

TEST_P(ShoupKernels, ElementwiseProductsMatchTheReference) {
  const u64 qv = GetParam();
  const auto q = *Modulus::create(qv);
  Prng prng = Prng::from_seed(Seed{}, 73);
  const std::size_t n = 1024;
  auto a = random_row(prng, n, qv), b = random_row(prng, n, qv);
  a[0] = qv - 1;  // extremes
  b[0] = qv - 1;
  a[1] = 0;
  std::vector<u64> out(n), ref(n), acc = random_row(prng, n, qv), acc_ref = acc;
  mul_row(a.data(), b.data(), out.data(), n, q);
  mul_row_scalar(a.data(), b.data(), ref.data(), n, q);
  EXPECT_EQ(out, ref);
  mul_add_row(a.data(), b.data(), acc.data(), n, q);
  for (std::size_t t = 0; t < n; ++t) acc_ref[t] = (acc_ref[t] + ref[t]) % qv;
  EXPECT_EQ(acc, acc_ref);
}

INSTANTIATE_TEST_SUITE_P(Moduli, ShoupKernels,
                         ::testing::Values(u64{97}, u64{1099511480321ULL}, u64{17179672577ULL},
                                           u64{1125899906826241ULL}, u64{1152921504606748673ULL},
                                           (u64{1} << 61) - 1));

}  // namespace
}  // namespace privsearch::ring
