// Known-answer tests for the negacyclic NTT on small primes. The expected vectors were computed
// by direct evaluation a(psi^(2 brv(i) + 1)) (testing/reference.h's ref_ntt, and independently
// by hand-written Python), never copied from another library.
#include <gtest/gtest.h>

#include <vector>

#include "ring/ntt.h"
#include "ring/primes.h"
#include "testing/reference.h"

namespace privsearch::ring {
namespace {

struct Kat {
  std::uint64_t q;
  std::size_t n;
  std::uint64_t psi;
  std::vector<std::uint64_t> input, expected;
};

std::vector<Kat> kats() {
  return {
      {97, 8, 8, {1, 2, 3, 4, 5, 6, 7, 8}, {86, 56, 41, 67, 4, 4, 53, 85}},
      {7681,
       16,
       97,
       {3, 4, 7, 12, 19, 28, 39, 52, 67, 84, 103, 124, 147, 172, 199, 228},
       {5470, 5028, 238, 3474, 3919, 4890, 1703, 6598, 5985, 7623, 4627, 1757, 1241, 2141, 6942,
        7541}},
  };
}

TEST(NttKat, MinimalPrimitiveRootMatches) {
  for (const auto& k : kats()) {
    EXPECT_EQ(*minimal_primitive_root(k.q, 2 * k.n), k.psi) << "q = " << k.q;
  }
}

TEST(NttKat, ReferenceReproducesTheKnownAnswers) {
  for (const auto& k : kats()) {
    EXPECT_EQ(testing::ref_ntt(k.input, k.psi, k.q), k.expected) << "q = " << k.q;
  }
}

TEST(NttKat, ForwardMatchesKnownAnswersOnEveryPath) {
  for (const auto& k : kats()) {
    const auto mod = *Modulus::create(k.q);
    const auto tables = *NttTables::create(k.n, mod);
    for (NttPath path : {NttPath::kScalar, NttPath::kAvx512, NttPath::kIfma}) {
      if (!tables.supports(path)) continue;
      auto a = k.input;
      tables.forward(a.data(), path);
      EXPECT_EQ(a, k.expected) << "q = " << k.q << " path " << ntt_path_name(path);
      tables.inverse(a.data(), path);
      EXPECT_EQ(a, k.input) << "q = " << k.q << " path " << ntt_path_name(path);
    }
  }
}

}  // namespace
}  // namespace privsearch::ring
