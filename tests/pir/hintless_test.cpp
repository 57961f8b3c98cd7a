// Known-answer and property tests of the hintless PIR backend's steps (pir/hintless): params,
// shapes, gadget digits, modulus switching, kernels, the hint, packing.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "pir/hintless/client/client.h"
#include "pir/hintless/crs.h"
#include "pir/hintless/hint.h"
#include "pir/hintless/kernels.h"
#include "pir/hintless/modswitch.h"
#include "pir/hintless/packing.h"
#include "pir/hintless/server.h"
#include "pir/hintless_reference.h"
#include "pir/hintless_test_util.h"
#include "pir/lwe/lwe.h"
#include "ring/automorphism.h"

namespace privsearch::pir::hintless {
namespace {

namespace ref = reference;

using test_util::random_records;
using test_util::secure_params;
using test_util::small_poly;
using test_util::source;
using test_util::test_params;

TEST(HintlessParamsTest, TableRowsPassTheirChecksAndInsecureNeedsOptIn) {
  for (const auto& p : hintless_param_table()) {
    EXPECT_TRUE(check_hintless_params(p).ok()) << p.name;
  }
  EXPECT_EQ(find_hintless_params("insecure-test-ypir-sp-d256").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(find_hintless_params("nope").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(hintless_params_by_id(12345).status().code(), StatusCode::kFailedPrecondition);
  HintlessParams p = secure_params();
  EXPECT_NEAR(p.log2_q(), 55.894, 0.001);
  EXPECT_EQ(p.packing_key_bytes(), 473088u);
  EXPECT_EQ(p.output_bytes(), 12288u);
  p.q_b = 249561091;  // not prime
  EXPECT_FALSE(check_hintless_params(p).ok());
  p = secure_params();
  p.d = 1024;  // the HE standard allows log2 q <= 29 at n = 1024
  EXPECT_FALSE(check_hintless_params(p).ok());
  p.secure = false;  // an insecure test row is not held to the table
  EXPECT_TRUE(check_hintless_params(p).ok());
}

TEST(HintlessParamsTest, FailureBoundHoldsForServedShapesAndCatchesBadOnes) {
  const HintlessParams p = secure_params();
  // The design note's shapes (docs/design/HINTLESS_PIR.md section 4.1).
  EXPECT_NEAR(hintless_decoding_failure_log2(p, 5183, 1), -99.0, 1.0);
  EXPECT_NEAR(hintless_decoding_failure_log2(p, 32768, 10), -95.6, 1.0);
  EXPECT_NEAR(hintless_decoding_failure_log2(p, 800, 19), -94.7, 1.0);
  EXPECT_LT(hintless_decoding_failure_log2(p, kMaxColumns, 32), kMaxDecodingFailureLog2);
  HintlessParams wide = p;
  wide.p_bits = 15;  // the note's sensitivity: p = 2^15 fails
  EXPECT_GT(hintless_decoding_failure_log2(wide, 32768, 10), kMaxDecodingFailureLog2);
  wide = p;
  wide.gadget_digits = 2;
  wide.gadget_log_base = 28;
  EXPECT_GT(hintless_decoding_failure_log2(wide, 32768, 10), kMaxDecodingFailureLog2);
}

TEST(HintlessShapeTest, ShapeRuleFitsRecordsAndRefusesTooLarge) {
  const HintlessParams p = secure_params();
  auto s = choose_hintless_shape(p, 5183, 2048);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->outputs, 1u);
  EXPECT_EQ(s->columns, 5183u);
  s = choose_hintless_shape(p, 32768, 32768);  // 1 GiB of 32 KB records
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->outputs, 10u);
  EXPECT_EQ(s->columns, 32768u);
  s = choose_hintless_shape(p, 1 << 24, 64);  // 1 GiB of 64 B payloads: query vector <= 256 KiB
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->outputs, 9u);
  EXPECT_LE(7 * s->columns, kQueryVectorBudget);
  s = choose_hintless_shape(p, 4000, 65536);  // IVF lists
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->outputs, 19u);
  EXPECT_EQ(choose_hintless_shape(p, 1, 1 << 20).status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(choose_hintless_shape(p, 0, 10).status().code(), StatusCode::kInvalidArgument);
}

TEST(HintlessKatTest, BytesAndEntriesRoundTrip) {
  Prng prng = Prng::from_seed(Seed{1});
  std::vector<std::uint8_t> bytes(3584 * 2);
  prng.fill(bytes);
  std::vector<std::uint16_t> e(4096);
  bytes_to_entries(bytes, 14, e);
  for (auto v : e) ASSERT_LT(v, 1u << 14);
  // entry 1 is bits 14..27: byte 1's top two bits, byte 2, byte 3's low four bits
  EXPECT_EQ(e[1], ((bytes[1] >> 6) | (bytes[2] << 2) | ((bytes[3] & 0xf) << 10)));
  std::vector<std::uint8_t> back(bytes.size());
  entries_to_bytes(e, 14, back);
  EXPECT_EQ(back, bytes);
}

TEST(HintlessKatTest, GadgetDigitsRecomposeAndAreBalanced) {
  const HintlessParams p = secure_params();
  const std::uint64_t q = p.q_a * p.q_b;
  Prng prng = Prng::from_seed(Seed{2});
  for (int trial = 0; trial < 20000; ++trial) {
    std::uint64_t x = trial < 4 ? std::vector<std::uint64_t>{0, q - 1, q / 2, q / 2 + 1}[trial]
                                : prng.uniform_below(q);
    std::int64_t dig[3];
    gadget_decompose(x, q, 19, 3, dig);
    __int128 sum = 0;
    for (int j = 2; j >= 0; --j) {
      ASSERT_GE(dig[j], -(1 << 18));
      ASSERT_LT(dig[j], 1 << 18);
      sum = sum * (1 << 19) + dig[j];
    }
    sum %= static_cast<__int128>(q);
    if (sum < 0) sum += q;
    ASSERT_EQ(static_cast<std::uint64_t>(sum), x);
  }
}

TEST(HintlessKatTest, ModulusSwitchMatchesWideRounding) {
  const HintlessRing ring = *HintlessRing::create(test_params());
  const std::size_t d = ring.d();
  Prng prng = Prng::from_seed(Seed{3});
  std::vector<u64> poly(2 * d), xs(d);
  for (std::size_t i = 0; i < d; ++i) {
    xs[i] = i == 0 ? ring.q() - 1 : prng.uniform_below(ring.q());
    poly[i] = xs[i] % ring.prime(0);
    poly[d + i] = xs[i] % ring.prime(1);
  }
  std::vector<u32> a(d), b(d);
  switch_a_part(ring, poly.data(), a.data());
  switch_b_part(ring, poly.data(), b.data());
  const long double q = static_cast<long double>(ring.q());
  for (std::size_t i = 0; i < d; ++i) {
    const unsigned __int128 x = xs[i];
    const u64 want_a =
        static_cast<u64>((x * ring.prime(0) + ring.q() / 2) / ring.q()) % ring.prime(0);
    const u64 want_b =
        static_cast<u64>(std::llroundl(static_cast<long double>(xs[i]) * 1048576.0L / q)) & 0xfffff;
    EXPECT_EQ(a[i], want_a) << i;
    EXPECT_EQ(b[i], want_b) << i;
  }
}

TEST(HintlessKatTest, KernelPathsMatchTheScalarReference) {
  Prng prng = Prng::from_seed(Seed{4});
  const std::size_t cols = 1237, stride = 1240;
  std::vector<std::uint16_t> rows(13 * stride);
  for (auto& v : rows) v = static_cast<std::uint16_t>(prng.uniform_below(1 << 14));
  rows[0] = (1 << 14) - 1;
  std::vector<std::uint32_t> xa(cols), xb(cols);
  for (auto& e : xa) e = static_cast<std::uint32_t>(prng.uniform_below(268369921));
  for (auto& e : xb) e = static_cast<std::uint32_t>(prng.uniform_below(249561089));
  xa[0] = 268369920;
  // Every path this CPU runs, on blocks of 8, 4 and 1 rows and a column tail (1237 = 154 x 8 + 5).
  const MatvecPaths paths = matvec_paths();
  for (std::size_t nrows : {std::size_t{1}, std::size_t{5}, std::size_t{8}, std::size_t{13}}) {
    std::vector<std::uint64_t> slow(2 * nrows);
    reference_kernels::matvec_rows(rows.data(), stride, nrows, cols, xa.data(), xb.data(),
                                   slow.data());
    if (nrows <= kMatvecRows) {
      std::vector<std::uint64_t> fast(2 * nrows);
      matvec_rows(rows.data(), stride, nrows, cols, xa.data(), xb.data(), fast.data());
      EXPECT_EQ(fast, slow) << nrows << " rows (dispatched)";
    }
    if (paths.avx512) {
      std::vector<std::uint64_t> got(2 * nrows);
      detail::matvec_rows_avx512(rows.data(), stride, nrows, cols, xa.data(), xb.data(),
                                 got.data());
      EXPECT_EQ(got, slow) << nrows << " rows (AVX-512 F)";
    }
    if (paths.ifma) {
      std::vector<std::uint64_t> got(2 * nrows);
      detail::matvec_rows_ifma(rows.data(), stride, nrows, cols, xa.data(), xb.data(), got.data());
      EXPECT_EQ(got, slow) << nrows << " rows (AVX-512 IFMA)";
    }
  }
  // The 64-bit lanes' worst case: every entry and residue at its maximum over many columns
  // (a lane's sum reaches 2^50 here; 52-bit products must not be truncated by IFMA).
  {
    const std::size_t wide = 65536;
    std::vector<std::uint16_t> top(2 * wide, (1 << 14) - 1);
    std::vector<std::uint32_t> ya(wide, 268369920), yb(wide, 249561088);
    std::vector<std::uint64_t> got(4), want(4);
    matvec_rows(top.data(), wide, 2, wide, ya.data(), yb.data(), got.data());
    reference_kernels::matvec_rows(top.data(), wide, 2, wide, ya.data(), yb.data(), want.data());
    EXPECT_EQ(got, want);
    EXPECT_EQ(want[0], std::uint64_t{wide} * ((1 << 14) - 1) * 268369920);
  }
  const ReduceConstants m{268369921, (std::uint64_t{1} << 58) / 268369921};
  const std::size_t d = 256;
  std::vector<std::uint64_t> even(d), odd(d), w(d), p1(d), m1(d), p2(d), m2(d);
  std::vector<std::uint32_t> dig(3 * d), key(3 * d);
  // The packing tree carries lazily reduced values in [0, 2q) (kernels.h): inputs up to 2q - 1,
  // the worst case in lane 0.
  for (std::size_t i = 0; i < d; ++i) {
    even[i] = i == 0 ? 2 * m.q - 1 : prng.uniform_below(2 * m.q);
    odd[i] = i == 0 ? 2 * m.q - 1 : prng.uniform_below(2 * m.q);
    w[i] = i == 0 ? m.q - 1 : prng.uniform_below(m.q);
  }
  for (auto& v : dig) v = static_cast<std::uint32_t>(prng.uniform_below(m.q));
  for (auto& v : key) v = static_cast<std::uint32_t>(prng.uniform_below(m.q));
  dig[0] = key[0] = static_cast<std::uint32_t>(m.q - 1);
  pack_butterfly(even.data(), odd.data(), w.data(), m, d, p1.data(), m1.data());
  reference_kernels::pack_butterfly(even.data(), odd.data(), w.data(), m, d, p2.data(), m2.data());
  EXPECT_EQ(p1, p2);
  EXPECT_EQ(m1, m2);
  for (std::size_t i = 0; i < d; ++i) {
    const unsigned __int128 wo = static_cast<unsigned __int128>(odd[i]) * w[i];
    ASSERT_LT(p1[i], 4 * m.q) << i;
    ASSERT_LT(m1[i], 4 * m.q) << i;
    ASSERT_EQ(p1[i] % m.q, static_cast<std::uint64_t>((even[i] + wo) % m.q)) << i;
    ASSERT_EQ((m1[i] + wo) % m.q, even[i] % m.q) << i;
  }
  std::vector<std::uint64_t> o1(d), o2(d);
  pack_accumulate(p1.data(), m1.data(), dig.data(), key.data(), d, 3, m, d, o1.data());
  reference_kernels::pack_accumulate(p1.data(), m1.data(), dig.data(), key.data(), d, 3, m, d,
                                     o2.data());
  EXPECT_EQ(o1, o2);
  for (std::size_t i = 0; i < d; ++i) {
    unsigned __int128 want = p1[i] + m1[i];
    for (int j = 0; j < 3; ++j) want += static_cast<std::uint64_t>(dig[j * d + i]) * key[j * d + i];
    ASSERT_LT(o1[i], 2 * m.q) << i;
    ASSERT_EQ(o1[i] % m.q, static_cast<std::uint64_t>(want % m.q)) << i;
  }
}

// The fused node kernel reads tau(minus) through the permutation's block form: the same words as
// permuting first and accumulating after, on both paths, for every level's Galois element.
TEST(HintlessKatTest, PermutedAccumulateEqualsPermuteThenAccumulate) {
  Prng prng = Prng::from_seed(Seed{11});
  const ReduceConstants m{249561089, (std::uint64_t{1} << 58) / 249561089};
  const std::size_t d = 256;
  for (int t : {3, 4}) {
    for (std::uint64_t g : {3, 5, 9, 17, 33, 65, 129, 257}) {
      const auto perm = ring::GaloisPermutation::create(g, d);
      ASSERT_TRUE(perm.ok()) << g;
      ASSERT_FALSE(perm->block_source().empty());
      std::vector<std::uint64_t> plus(d), minus(d), minus_perm(d);
      for (auto& v : plus) v = prng.uniform_below(4 * m.q);
      for (auto& v : minus) v = prng.uniform_below(4 * m.q);
      plus[0] = minus[0] = 4 * m.q - 1;
      std::vector<std::uint32_t> dig(t * d), key(t * d);
      for (auto& v : dig) v = static_cast<std::uint32_t>(prng.uniform_below(m.q));
      for (auto& v : key) v = static_cast<std::uint32_t>(prng.uniform_below(m.q));
      dig[0] = key[0] = static_cast<std::uint32_t>(m.q - 1);
      perm->apply(minus.data(), minus_perm.data());
      std::vector<std::uint64_t> want(d), fused(d), fused_ref(d), unfused(d);
      reference_kernels::pack_accumulate(plus.data(), minus_perm.data(), dig.data(), key.data(), d,
                                         t, m, d, want.data());
      pack_accumulate(plus.data(), minus_perm.data(), dig.data(), key.data(), d, t, m, d,
                      unfused.data());
      pack_accumulate_permuted(plus.data(), minus.data(), perm->block_source().data(),
                               perm->block_lanes().data(), dig.data(), key.data(), d, t, m, d,
                               fused.data());
      reference_kernels::pack_accumulate_permuted(
          plus.data(), minus.data(), perm->block_source().data(), perm->block_lanes().data(),
          dig.data(), key.data(), d, t, m, d, fused_ref.data());
      EXPECT_EQ(unfused, want) << "t = " << t << ", g = " << g;
      EXPECT_EQ(fused, want) << "t = " << t << ", g = " << g;
      EXPECT_EQ(fused_ref, want) << "t = " << t << ", g = " << g;
    }
    std::vector<std::uint32_t> dig(t * d), key(t * d);
    for (auto& v : dig) v = static_cast<std::uint32_t>(prng.uniform_below(m.q));
    for (auto& v : key) v = static_cast<std::uint32_t>(prng.uniform_below(m.q));
    std::vector<std::uint64_t> c1(d), c2(d);
    pack_accumulate_const(2 * m.q - 1, dig.data(), key.data(), d, t, m, d, c1.data());
    reference_kernels::pack_accumulate_const(2 * m.q - 1, dig.data(), key.data(), d, t, m, d,
                                             c2.data());
    EXPECT_EQ(c1, c2) << "t = " << t;
  }
}

// The lazy reduction's worst case (kernels.h): for q = 134246401 and this x the quotient estimate
// is 2 short, so one conditional subtraction leaves a value in [q, 2q), on both paths alike.
TEST(HintlessKatTest, LazyReductionWorstCaseStaysBelowTwoQ) {
  const std::uint64_t q = 134246401, x = 288230367159123967;
  const ReduceConstants m{q, (std::uint64_t{1} << 58) / q};
  const std::size_t d = 16;
  const std::vector<std::uint32_t> zero(3 * d, 0);
  std::vector<std::uint64_t> fast(d), slow(d);
  pack_accumulate_const(x, zero.data(), zero.data(), d, 3, m, d, fast.data());
  reference_kernels::pack_accumulate_const(x, zero.data(), zero.data(), d, 3, m, d, slow.data());
  EXPECT_EQ(fast, slow);
  for (const std::uint64_t r : fast) {
    EXPECT_EQ(r % q, x % q);
    EXPECT_GE(r, q);      // the 2-short case is real ...
    EXPECT_LT(r, 2 * q);  // ... and stays within the tree's bound
  }
}

// The fused level-2 pass gives the words of its three steps apart: two leaf-pair accumulations
// over one key and the parent's butterfly, at the largest lazy inputs.
TEST(HintlessKatTest, LeafPairsButterflyEqualsItsSteps) {
  Prng prng = Prng::from_seed(Seed{12});
  for (std::uint64_t prime : {268369921u, 249561089u}) {
    const ReduceConstants m{prime, (std::uint64_t{1} << 58) / prime};
    const std::size_t d = 256;
    for (int t : {3, 4}) {
      std::vector<std::uint32_t> de(t * d), dodd(t * d), key(t * d);
      for (auto* v : {&de, &dodd, &key}) {
        for (auto& x : *v) x = static_cast<std::uint32_t>(prng.uniform_below(m.q));
        (*v)[0] = static_cast<std::uint32_t>(m.q - 1);
      }
      std::vector<std::uint64_t> w(d);
      for (auto& x : w) x = prng.uniform_below(m.q);
      w[0] = m.q - 1;
      const std::uint64_t be = 2 * m.q - 1, bo = prng.uniform_below(2 * m.q);
      std::vector<std::uint64_t> e(d), o(d), p1(d), m1(d), p2(d), m2(d), p3(d), m3(d);
      reference_kernels::pack_accumulate_const(be, de.data(), key.data(), d, t, m, d, e.data());
      reference_kernels::pack_accumulate_const(bo, dodd.data(), key.data(), d, t, m, d, o.data());
      reference_kernels::pack_butterfly(e.data(), o.data(), w.data(), m, d, p1.data(), m1.data());
      pack_leaf_pairs_butterfly(be, bo, de.data(), dodd.data(), key.data(), d, t, w.data(), m, d,
                                p2.data(), m2.data());
      reference_kernels::pack_leaf_pairs_butterfly(be, bo, de.data(), dodd.data(), key.data(), d, t,
                                                   w.data(), m, d, p3.data(), m3.data());
      EXPECT_EQ(p2, p1) << "t = " << t;
      EXPECT_EQ(m2, m1) << "t = " << t;
      EXPECT_EQ(p3, p1) << "t = " << t;
      EXPECT_EQ(m3, m1) << "t = " << t;
    }
  }
}

// H = D A from its definition: entry j of H_r is sum_c D[r][c] A_c[j], A_c[j] = a_k[i - j]
// (negated when j > i), with a_k read from the CRS in coefficient form.
TEST(HintlessKatTest, HintMatchesSchoolbookProduct) {
  const HintlessParams p = test_params();
  const HintlessRing ring = *HintlessRing::create(p);
  const std::size_t d = p.d;
  const HintlessShape shape = *choose_hintless_shape(p, 300, 448);  // d0 = 300 > d
  ASSERT_EQ(shape.columns, 300u);
  const auto records = random_records(300, 448, 1);
  HintlessDatabase db(p, shape);
  ASSERT_TRUE(db.fill(source(records)).ok());
  const HintBuilder hint(ring, shape.columns);
  std::vector<u64> fast(2 * d), scratch(2 * d);
  const std::uint64_t q = ring.q();
  std::vector<ref::Poly> a;
  for (std::size_t k = 0; k < 2; ++k) {
    const std::vector<u64> ak = crs_query_poly(ring, k);
    a.push_back(ref::from_poly2_ntt(ring, ak.data()));
  }
  for (std::size_t r : {std::size_t{0}, std::size_t{17}, d - 1}) {
    hint.leaf_a_part(db, r, fast.data(), scratch.data());
    ref::Poly h(d, 0);
    for (std::size_t c = 0; c < shape.columns; ++c) {
      const std::size_t k = c / d, i = c % d;
      for (std::size_t j = 0; j < d; ++j) {
        const u64 coef = j <= i ? a[k][i - j] : (q - a[k][i + d - j]) % q;
        h[j] = static_cast<u64>((h[j] + static_cast<unsigned __int128>(db.row(r)[c]) * coef) % q);
      }
    }
    // The leaf is conj(H_r) d^-1: multiply the fast one by d and conjugate it back.
    ref::Poly got = ref::from_poly2_ntt(ring, fast.data());
    for (auto& v : got) v = static_cast<u64>(static_cast<unsigned __int128>(v) * d % q);
    EXPECT_EQ(ref::galois(got, 2 * d - 1, q), h) << "row " << r;
  }
}

// The precomputed + online packing equals CDKS on full ciphertexts bit for bit, and decrypts to
// d sum_r phase_r X^r plus small noise (the X^r order pinned here).
// Packs `batch` queries (the same key, their own leaf b-values) with pack_online through one
// reused working area, and checks each against CDKS on full ciphertexts bit for bit.
void check_packing_against_reference(const HintlessParams& p, std::size_t batch,
                                     PackScratch& scratch) {
  const HintlessRing ring = *HintlessRing::create(p);
  const std::size_t d = p.d;
  const std::uint64_t q = ring.q();
  const int t = p.gadget_digits;
  Prng prng = Prng::from_seed(Seed{5}, d + batch);
  const ref::Poly s = ref::from_signed(small_poly(d, prng), q);
  std::vector<u64> leaf_a(d * 2 * d);
  std::vector<ref::Poly> a_rows(d);
  for (std::size_t r = 0; r < d; ++r) {
    a_rows[r].resize(d);
    for (auto& v : a_rows[r]) v = prng.uniform_below(q);
    const std::vector<u64> a2 = ref::to_poly2_ntt(ring, a_rows[r]);
    std::copy(a2.begin(), a2.end(), leaf_a.begin() + r * 2 * d);
  }
  // Keys with the CRS a-rows and fresh errors.
  const std::vector<u64> key_a = crs_key_polys(ring);
  std::vector<std::vector<ref::Poly>> ka(ring.log_d()), ke(ring.log_d());
  for (int l = 0; l < ring.log_d(); ++l) {
    for (int j = 0; j < t; ++j) {
      ka[l].push_back(ref::from_poly2_ntt(ring, key_a.data() + (l * t + j) * 2 * d));
      ke[l].push_back(ref::from_signed(small_poly(d, prng), q));
    }
  }
  const ref::Keys keys = ref::make_keys(ring, s, ka, ke);
  std::vector<u32> key_b(key_a.size());
  for (int l = 0; l < ring.log_d(); ++l) {
    for (int j = 0; j < t; ++j) {
      const std::vector<u64> b2 = ref::to_poly2_ntt(ring, keys[l][j].b);
      for (std::size_t i = 0; i < 2 * d; ++i)
        key_b[(l * t + j) * 2 * d + i] = static_cast<u32>(b2[i]);
    }
  }
  // Per query: b = <s, a> + small phase offsets.
  std::vector<std::vector<u64>> leaf_b(batch, std::vector<u64>(2 * d)), out = leaf_b;
  std::vector<ref::Ciphertext> want(batch);
  std::vector<std::vector<std::int64_t>> phases(batch, std::vector<std::int64_t>(d));
  for (std::size_t k = 0; k < batch; ++k) {
    std::vector<ref::Ciphertext> inputs(d);
    for (std::size_t r = 0; r < d; ++r) {
      phases[k][r] = static_cast<std::int64_t>(prng.uniform_below(1000)) - 500;
      const u64 b = (ref::mul(s, a_rows[r], q)[0] +
                     static_cast<u64>(phases[k][r] + static_cast<std::int64_t>(q))) %
                    q;
      inputs[r] = {a_rows[r], ref::Poly(d, 0)};
      inputs[r].b[0] = b;
      leaf_b[k][r] = b % ring.prime(0);
      leaf_b[k][d + r] = b % ring.prime(1);
    }
    want[k] = ref::pack(ring, inputs, keys);
  }
  const PackPrecomp pre = PackPrecomp::build(ring, leaf_a, key_a);
  EXPECT_EQ(pre.nodes(), d - 1);
  std::vector<const u64*> leaf_ptr;
  std::vector<u64*> out_ptr;
  const std::vector<PackingKeyView> views(batch, PackingKeyView{key_b.data()});
  for (std::size_t k = 0; k < batch; ++k) {
    leaf_ptr.push_back(leaf_b[k].data());
    out_ptr.push_back(out[k].data());
  }
  for (int prime : {1, 0}) pack_online(ring, pre, leaf_ptr, views, out_ptr, prime, &scratch);
  for (std::size_t k = 0; k < batch; ++k) {
    EXPECT_EQ(ref::from_poly2_ntt(ring, pre.output_a().data()), want[k].a) << "query " << k;
    EXPECT_EQ(ref::from_poly2_ntt(ring, out[k].data()), want[k].b) << "query " << k;
    // The words themselves, fully reduced (the tree's lazy [0, 2q) values must not leak out).
    EXPECT_EQ(out[k], ref::to_poly2_ntt(ring, want[k].b)) << "query " << k;
  }
  // Decrypt: coefficient r is d phase_r + e with |e| far below the scale of the messages.
  const ref::Poly phase = ref::sub(want[0].b, ref::mul(s, want[0].a, q), q);
  double max_noise = 0;
  for (std::size_t r = 0; r < d; ++r) {
    const __int128 want_r = static_cast<__int128>(d) * phases[0][r];
    __int128 got = phase[r] > q / 2 ? static_cast<__int128>(phase[r]) - q : phase[r];
    max_noise = std::max(max_noise, std::fabs(static_cast<double>(got - want_r)));
  }
  EXPECT_GT(max_noise, 0.0);              // the key errors are there ...
  EXPECT_LT(max_noise, std::exp2(45.0));  // ... and far below q / p = 2^41.9 times d
}

TEST(HintlessKatTest, PackingMatchesReferenceBitForBit) {
  PackScratch scratch;  // reused across batch sizes and primes, as a server worker does
  check_packing_against_reference(test_params(), 1, scratch);
  check_packing_against_reference(test_params(), 3, scratch);
}

// Another allowed prime (q_a = 134246401, just above 2^27, where the Barrett quotient can fall 2
// short for x near 2^58), and rings of 2^4 and 2^3 coefficients, whose root lies inside the
// query-by-query walk (no node-by-node level).
TEST(HintlessKatTest, PackingMatchesReferenceOnOtherPrimesAndSmallRings) {
  PackScratch scratch;
  HintlessParams low = test_params();
  low.q_a = 134246401;
  ASSERT_TRUE(check_hintless_params(low).ok());
  check_packing_against_reference(low, 2, scratch);
  for (std::size_t d : {16u, 8u}) {
    HintlessParams small = test_params();
    small.d = d;
    ASSERT_TRUE(check_hintless_params(small).ok()) << d;
    check_packing_against_reference(small, 2, scratch);
  }
}

}  // namespace
}  // namespace privsearch::pir::hintless
