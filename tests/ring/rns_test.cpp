#include "ring/rns.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/csprng.h"
#include "ring/primes.h"
#include "ring/rns_poly.h"

namespace privsearch::ring {
namespace {

TEST(RnsBase, RejectsDuplicatesAndEmpty) {
  const std::uint64_t dup[] = {97, 97};
  EXPECT_FALSE(RnsBase::create(dup).ok());
  EXPECT_FALSE(RnsBase::create({}).ok());
}

TEST(RnsBase, ComposeCenteredRoundTripsSmallIntegers) {
  const auto primes = *largest_ntt_primes(40, 1024, 3);
  const auto base = *RnsBase::create(primes);
  Prng prng = Prng::from_seed(Seed{}, 31);
  for (int i = 0; i < 1000; ++i) {
    // Values up to +-2^100 round trip through residues (double keeps 53 bits).
    const __int128 x = (static_cast<__int128>(static_cast<std::int64_t>(prng.next_u64())) << 36) +
                       static_cast<__int128>(prng.next_u64() >> 30);
    std::uint64_t res[3];
    for (int j = 0; j < 3; ++j) {
      const __int128 m = static_cast<__int128>(primes[j]);
      __int128 r = x % m;
      if (r < 0) r += m;
      res[j] = static_cast<std::uint64_t>(r);
    }
    const double got = base.compose_centered(res, 1);
    EXPECT_NEAR(got, static_cast<double>(x), std::fabs(static_cast<double>(x)) * 1e-15 + 1);
  }
}

TEST(RnsBase, SinglePrimeCentersValues) {
  const std::uint64_t q[] = {97};
  const auto base = *RnsBase::create(q);
  std::uint64_t r = 96;
  EXPECT_EQ(base.compose_centered(&r, 1), -1.0);
  r = 48;
  EXPECT_EQ(base.compose_centered(&r, 1), 48.0);
  r = 49;
  EXPECT_EQ(base.compose_centered(&r, 1), -48.0);
}

TEST(BaseConverter, FastConversionIsExactUpToMultiplesOfTheSourceModulus) {
  const auto from_primes = *largest_ntt_primes(50, 64, 2);
  const auto to_primes = *largest_ntt_primes(40, 64, 2);
  const auto from = *RnsBase::create(from_primes);
  const auto to = *RnsBase::create(to_primes);
  const auto conv = *BaseConverter::create(from, to);
  Prng prng = Prng::from_seed(Seed{}, 32);
  const std::size_t n = 64;
  std::vector<std::uint64_t> in(2 * n), out(2 * n);
  std::vector<unsigned __int128> x(n);
  const unsigned __int128 m = static_cast<unsigned __int128>(from_primes[0]) * from_primes[1];
  for (std::size_t c = 0; c < n; ++c) {
    x[c] = ((static_cast<unsigned __int128>(prng.next_u64()) << 64) | prng.next_u64()) % m;
    in[c] = static_cast<std::uint64_t>(x[c] % from_primes[0]);
    in[n + c] = static_cast<std::uint64_t>(x[c] % from_primes[1]);
  }
  conv.convert(in.data(), out.data(), n, 2);
  for (std::size_t j = 0; j < 2; ++j) {
    for (std::size_t c = 0; c < n; ++c) {
      // out = x + u*M mod b_j with u in {0, 1}
      bool ok = false;
      for (unsigned u = 0; u < 2; ++u) {
        const unsigned __int128 v = (x[c] + u * m) % to_primes[j];
        ok |= static_cast<std::uint64_t>(v) == out[j * n + c];
      }
      EXPECT_TRUE(ok) << j << " " << c;
    }
  }
}

TEST(RnsPoly, ElementwiseOpsMatchScalarArithmetic) {
  const auto m = *Modulus::create(97);
  const Modulus mods[] = {m};
  RnsPoly a(8, 1, true), b(8, 1, true);
  for (std::size_t i = 0; i < 8; ++i) {
    a.row(0)[i] = i * 13 % 97;
    b.row(0)[i] = (90 + i) % 97;
  }
  RnsPoly s = a;
  add_inplace(s, b, mods);
  RnsPoly d = a;
  sub_inplace(d, b, mods);
  RnsPoly p = a;
  multiply_inplace(p, b, mods);
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(s.row(0)[i], (a.row(0)[i] + b.row(0)[i]) % 97);
    EXPECT_EQ(d.row(0)[i], (a.row(0)[i] + 97 - b.row(0)[i]) % 97);
    EXPECT_EQ(p.row(0)[i], a.row(0)[i] * b.row(0)[i] % 97);
  }
}

}  // namespace
}  // namespace privsearch::ring

namespace privsearch::ring {
namespace {

TEST(BaseConverter, CenteredConversionIsExact) {
  const auto from_primes = *largest_ntt_primes(40, 64, 3);
  const auto to_primes = *largest_ntt_primes(50, 64, 2);
  const auto conv =
      *BaseConverter::create(*RnsBase::create(from_primes), *RnsBase::create(to_primes));
  Prng prng = Prng::from_seed(Seed{}, 33);
  const std::size_t n = 64;
  std::vector<std::uint64_t> in(3 * n), out(2 * n);
  std::vector<__int128> x(n);
  __int128 m = 1;
  for (auto p : from_primes) m *= p;
  for (std::size_t c = 0; c < n; ++c) {
    // Centred values in (-M/2, M/2], including the extremes.
    __int128 v = static_cast<__int128>(
                     ((static_cast<unsigned __int128>(prng.next_u64()) << 64) | prng.next_u64()) %
                     static_cast<unsigned __int128>(m)) -
                 m / 2;
    if (c == 0) v = m / 2;  // the tie: x or x - M are both acceptable (see rns.h)
    if (c == 1) v = -m / 2 + 1;
    if (c == 2) v = 0;
    x[c] = v;
    for (std::size_t i = 0; i < 3; ++i) {
      __int128 r = v % static_cast<__int128>(from_primes[i]);
      if (r < 0) r += from_primes[i];
      in[i * n + c] = static_cast<std::uint64_t>(r);
    }
  }
  const std::size_t targets[] = {1, 0};
  conv.convert_centered(in.data(), out.data(), n, targets);
  for (std::size_t r = 0; r < 2; ++r) {
    const __int128 b = static_cast<__int128>(to_primes[targets[r]]);
    for (std::size_t c = 0; c < n; ++c) {
      auto residue = [&](__int128 v) {
        __int128 e = v % b;
        return static_cast<std::uint64_t>(e < 0 ? e + b : e);
      };
      if (c == 0) {
        EXPECT_TRUE(out[r * n + c] == residue(x[c]) || out[r * n + c] == residue(x[c] - m));
      } else {
        EXPECT_EQ(out[r * n + c], residue(x[c])) << r << " " << c;
      }
    }
  }
}

}  // namespace
}  // namespace privsearch::ring
