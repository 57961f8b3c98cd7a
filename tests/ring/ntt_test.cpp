#include "ring/ntt.h"

#include <gtest/gtest.h>

#include "core/csprng.h"
#include "ring/primes.h"
#include "ring/rns.h"
#include "testing/reference.h"

namespace privsearch::ring {
namespace {

std::vector<u64> random_poly(Prng& p, std::size_t n, u64 q) {
  std::vector<u64> v(n);
  for (auto& x : v) x = p.uniform_below(q);
  return v;
}

NttTables tables_for(std::size_t n, int bits) {
  const auto q = largest_ntt_primes(bits, n, 1).value()[0];
  return NttTables::create(n, Modulus::create(q).value()).value();
}

TEST(NttTables, RejectsBadDegreesAndModuli) {
  const auto q = *Modulus::create(97);
  EXPECT_FALSE(NttTables::create(6, q).ok());
  EXPECT_FALSE(NttTables::create(64, q).ok());                    // 97 != 1 mod 128
  EXPECT_FALSE(NttTables::create(8, *Modulus::create(99)).ok());  // not prime
}

TEST(NttTables, ForwardMatchesDirectEvaluation) {
  Prng prng = Prng::from_seed(Seed{}, 21);
  for (std::size_t n : {2u, 4u, 16u, 64u, 256u}) {
    for (int bits : {30, 49, 60}) {
      const auto t = tables_for(n, bits);
      const u64 q = t.modulus().value();
      const auto a = random_poly(prng, n, q);
      const auto expected = testing::ref_ntt(a, t.psi(), q);
      for (NttPath path : {NttPath::kScalar, NttPath::kAvx512, NttPath::kIfma}) {
        if (!t.supports(path)) continue;
        auto b = a;
        t.forward(b.data(), path);
        EXPECT_EQ(b, expected) << "n = " << n << " bits = " << bits << " " << ntt_path_name(path);
      }
    }
  }
}

// forward_mod_down against the definition: direct evaluation of the lifted row, then
// (x - v) * w + addend[perm] with 128-bit arithmetic; every path, with and without the lift and
// the addend, and a p too large for the IFMA lanes (which must fall back, not wrap).
TEST(NttTables, ForwardModDownMatchesTheDefinition) {
  Prng prng = Prng::from_seed(Seed{}, 23);
  for (std::size_t n : {16u, 64u, 256u}) {
    for (int bits : {40, 49, 60}) {
      const auto t = tables_for(n, bits);
      const u64 q = t.modulus().value();
      for (int p_bits : {0, 50, 61}) {
        const u64 p = p_bits == 0 ? 0 : largest_ntt_primes(p_bits, n, 1).value()[0];
        const auto y = random_poly(prng, n, p == 0 ? q : p);
        std::vector<u64> lifted(n);
        for (std::size_t i = 0; i < n; ++i) {
          const __int128 v = p != 0 && y[i] > p / 2 ? static_cast<__int128>(y[i]) - p : y[i];
          __int128 r = v % static_cast<__int128>(q);
          lifted[i] = static_cast<u64>(r < 0 ? r + q : r);
        }
        const auto v = testing::ref_ntt(lifted, t.psi(), q);
        const auto x = random_poly(prng, n, q);
        const auto addend = random_poly(prng, n, q);
        const u64 w = prng.uniform_below(q);
        const auto perm = *GaloisPermutation::create(galois_elt_for_step(5, n), n);
        // no addend, plain addend, permuted addend; then the same with x already scaled
        for (int mode = 0; mode < 6; ++mode) {
          const bool scaled = mode >= 3;
          std::vector<u64> expected(n);
          for (std::size_t i = 0; i < n; ++i) {
            u64 r = scaled ? (x[i] + q - testing::ref_mulmod(v[i], w, q)) % q
                           : testing::ref_mulmod((x[i] + q - v[i]) % q, w, q);
            if (mode % 3 == 1) r = (r + addend[i]) % q;
            if (mode % 3 == 2) r = (r + addend[perm.table()[i]]) % q;
            expected[i] = r;
          }
          for (NttPath path : {NttPath::kScalar, NttPath::kAvx512, NttPath::kIfma}) {
            if (!t.supports(path)) continue;
            std::vector<u64> out = x, scratch(n);
            const ModDownRow::Target target{out.data(), w, out.data(), scaled};
            auto row = p == 0 ? ModDownRow::direct(y.data(), target)
                              : ModDownRow::lift(y.data(), p, target);
            row.with_addend(mode % 3 == 0 ? nullptr : addend.data(),
                            mode % 3 == 2 ? &perm : nullptr);
            t.forward_mod_down(row, scratch.data(), path);
            EXPECT_EQ(out, expected) << "n = " << n << " bits = " << bits << " p bits = " << p_bits
                                     << " mode " << mode << " " << ntt_path_name(path);
          }
        }
      }
    }
  }
}

// Conversion mode (several special primes): the first stage forms the exact centred conversion
// of [x]_P from BaseConverter::prepare_centered's shared rows. Checked against the definition:
// the 128-bit CRT value of the residues, centred, reduced modulo q.
TEST(NttTables, ForwardModDownConvertsSeveralSpecialPrimes) {
  Prng prng = Prng::from_seed(Seed{}, 24);
  for (std::size_t n : {16u, 256u}) {
    for (int bits : {32, 49, 60}) {
      const auto t = tables_for(n, bits);
      const u64 q = t.modulus().value();
      for (int p_bits : {50, 61}) {
        const auto ps = largest_ntt_primes(p_bits, n, 2).value();
        const auto from = *RnsBase::create(ps);
        const auto conv = *BaseConverter::create(from, *RnsBase::create(std::vector<u64>{q}));
        std::vector<u64> y(2 * n), tr(2 * n), u(n), lifted(n);
        for (std::size_t k = 0; k < 2; ++k) {
          for (std::size_t i = 0; i < n; ++i) y[k * n + i] = prng.uniform_below(ps[k]);
        }
        y[0] = 0;  // extremes: 0 and P - 1
        y[1] = ps[0] - 1;
        y[n + 1] = ps[1] - 1;
        const unsigned __int128 big_p = static_cast<unsigned __int128>(ps[0]) * ps[1];
        for (std::size_t i = 0; i < n; ++i) {
          // Garner: X = y0 + p0 * ((y1 - y0) p0^-1 mod p1), then centred.
          const u64 inv = testing::ref_powmod(ps[0] % ps[1], ps[1] - 2, ps[1]);
          const u64 d = (y[n + i] + ps[1] - y[i] % ps[1]) % ps[1];
          const unsigned __int128 x =
              y[i] + static_cast<unsigned __int128>(ps[0]) * testing::ref_mulmod(d, inv, ps[1]);
          const __int128 c = x > big_p / 2 ? static_cast<__int128>(x) - static_cast<__int128>(big_p)
                                           : static_cast<__int128>(x);
          const __int128 r = c % static_cast<__int128>(q);
          lifted[i] = static_cast<u64>(r < 0 ? r + q : r);
        }
        const auto v = testing::ref_ntt(lifted, t.psi(), q);
        conv.prepare_centered(y.data(), tr.data(), u.data(), n);
        const u64 c[2] = {conv.punctured_mod_to(0, 0), conv.punctured_mod_to(0, 1)};
        const auto x = random_poly(prng, n, q);
        const u64 w = prng.uniform_below(q);
        for (bool scaled : {false, true}) {
          std::vector<u64> expected(n);
          for (std::size_t i = 0; i < n; ++i) {
            expected[i] = scaled ? (x[i] + q - testing::ref_mulmod(v[i], w, q)) % q
                                 : testing::ref_mulmod((x[i] + q - v[i]) % q, w, q);
          }
          for (NttPath path : {NttPath::kScalar, NttPath::kAvx512, NttPath::kIfma}) {
            if (!t.supports(path)) continue;
            std::vector<u64> out = x, scratch(n);
            ModDownRow::Conversion cv;
            cv.t = tr.data();
            cv.u = u.data();
            cv.sources = 2;
            cv.c = c;
            cv.m = conv.modulus_mod_to(0);
            cv.max_source = std::max(ps[0], ps[1]);
            const auto row =
                ModDownRow::conversion(cv, ModDownRow::Target{out.data(), w, out.data(), scaled});
            t.forward_mod_down(row, scratch.data(), path);
            EXPECT_EQ(out, expected) << "n = " << n << " bits = " << bits << " p bits = " << p_bits
                                     << (scaled ? " scaled " : " ") << ntt_path_name(path);
          }
        }
      }
    }
  }
}

TEST(NttTables, ForwardThenInverseIsIdentity) {
  Prng prng = Prng::from_seed(Seed{}, 22);
  for (std::size_t n : {16u, 1024u, 8192u}) {
    for (int bits : {40, 50, 60, 61}) {
      const auto t = tables_for(n, bits);
      const auto a = random_poly(prng, n, t.modulus().value());
      for (NttPath path : {NttPath::kScalar, NttPath::kAvx512, NttPath::kIfma}) {
        if (!t.supports(path)) continue;
        auto b = a;
        t.forward(b.data(), path);
        t.inverse(b.data(), path);
        EXPECT_EQ(b, a) << n << " " << bits << " " << ntt_path_name(path);
      }
    }
  }
}

TEST(NttTables, NttProductEqualsSchoolbookNegacyclicProduct) {
  Prng prng = Prng::from_seed(Seed{}, 23);
  for (std::size_t n : {8u, 32u, 128u}) {
    for (int bits : {45, 60}) {
      const auto t = tables_for(n, bits);
      const u64 q = t.modulus().value();
      const auto a = random_poly(prng, n, q), b = random_poly(prng, n, q);
      auto fa = a, fb = b;
      t.forward(fa.data());
      t.forward(fb.data());
      for (std::size_t i = 0; i < n; ++i) fa[i] = t.modulus().mul(fa[i], fb[i]);
      t.inverse(fa.data());
      EXPECT_EQ(fa, testing::ref_negacyclic_mul(a, b, q)) << n << " " << bits;
    }
  }
}

TEST(NttTables, IfmaPathEqualsScalarPath) {
  const auto t = tables_for(8192, 50);
  if (!t.supports(NttPath::kIfma)) GTEST_SKIP() << "CPU without AVX-512 IFMA";
  EXPECT_EQ(t.default_path(), NttPath::kIfma);
  Prng prng = Prng::from_seed(Seed{}, 24);
  for (int trial = 0; trial < 20; ++trial) {
    const auto a = random_poly(prng, 8192, t.modulus().value());
    auto s = a, v = a;
    t.forward(s.data(), NttPath::kScalar);
    t.forward(v.data(), NttPath::kIfma);
    ASSERT_EQ(s, v) << "forward, trial " << trial;
    t.inverse(s.data(), NttPath::kScalar);
    t.inverse(v.data(), NttPath::kIfma);
    ASSERT_EQ(s, v) << "inverse, trial " << trial;
    // Edge values: all q-1 stress the lazy ranges.
  }
  std::vector<u64> edge(8192, t.modulus().value() - 1);
  auto s = edge, v = edge;
  t.forward(s.data(), NttPath::kScalar);
  t.forward(v.data(), NttPath::kIfma);
  EXPECT_EQ(s, v);
}

TEST(NttTables, Avx512PathEqualsScalarPathForSixtyOneBitPrimes) {
  for (int bits : {51, 60, 61}) {
    const auto t = tables_for(8192, bits);
    if (!t.supports(NttPath::kAvx512)) GTEST_SKIP() << "CPU without AVX-512DQ";
    EXPECT_EQ(t.default_path(), NttPath::kAvx512);
    Prng prng = Prng::from_seed(Seed{}, 25);
    for (int trial = 0; trial < 10; ++trial) {
      const auto a = random_poly(prng, 8192, t.modulus().value());
      auto s = a, v = a;
      t.forward(s.data(), NttPath::kScalar);
      t.forward(v.data(), NttPath::kAvx512);
      ASSERT_EQ(s, v) << "forward, bits " << bits;
      t.inverse(s.data(), NttPath::kScalar);
      t.inverse(v.data(), NttPath::kAvx512);
      ASSERT_EQ(s, v) << "inverse, bits " << bits;
    }
    std::vector<u64> edge(8192, t.modulus().value() - 1);
    auto s = edge, v = edge;
    t.forward(s.data(), NttPath::kScalar);
    t.forward(v.data(), NttPath::kAvx512);
    EXPECT_EQ(s, v);
  }
}

}  // namespace
}  // namespace privsearch::ring
