// The packed kernel (rerank/packed.h) against slow references: the leaf encoding bit for bit,
// the CDKS tree on plaintext polynomials (exact: the trace zeroes every coefficient but the
// scores), the homomorphic tree within its noise of that reference, the response's modulus
// switch bit for bit, and scores within the stated error of plaintext for random and
// adversarial unit vectors at the secure preset and over edge shapes at a small ring.
#include "rerank/packed.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "ckks/client/decryptor.h"
#include "ckks/client/keygen.h"
#include "ckks/param_sets.h"
#include "rerank/client/packed_scores.h"
#include "rerank/client/scores.h"
#include "rerank/kernels.h"
#include "rerank/packed_fixture.h"
#include "rerank/packed_response.h"
#include "testing/test_util.h"

namespace privsearch::rerank {
namespace {

using namespace testing_packed;

// --- tests ------------------------------------------------------------------------------------

TEST(PackedLayout, PapersShapeUsesTenKeysAndOneOutput) {
  const auto params = *ckks::Params::create(ckks::packed_n4096_literal());
  EXPECT_EQ(kernel_for_params(params), Kernel::kPacked);
  const auto l = *make_layout(params, Kernel::kPacked, 672, 100);
  EXPECT_EQ(l.period(), 1024u);
  EXPECT_EQ(l.blocks(), 4u);
  EXPECT_EQ(l.tree_levels(), 5u);  // 25 leaves -> 32
  EXPECT_EQ(l.capacity(), 128u);
  EXPECT_EQ(l.outputs(), 1u);
  EXPECT_EQ(l.rotation_steps().size(), 10u);  // g = 2^3 + 1 .. 2^12 + 1
  std::vector<bool> seen(params.n(), false);
  for (const auto& ref : l.slot_map()) {
    ASSERT_LT(ref.slot, params.n());
    EXPECT_FALSE(seen[ref.slot]);
    seen[ref.slot] = true;
    EXPECT_EQ(ref.slot % 32, 0u);
  }
  EXPECT_EQ(l.slot_map()[1].slot, 1024u);  // leaf 0, row 1
  EXPECT_EQ(l.slot_map()[4].slot, 512u);   // leaf 1, row 0: tree index brv_5(1) = 16
  EXPECT_EQ(l.slot_map()[8].slot, 256u);   // leaf 2: tree index 8
  // K above n: one output per n candidates, every key set the same.
  const auto big = *make_layout(params, Kernel::kPacked, 672, 4097);
  EXPECT_EQ(big.outputs(), 2u);
  EXPECT_EQ(big.capacity(), 4096u);
  EXPECT_EQ(big.rotation_steps(), l.rotation_steps());
}

TEST(PackedKernel, LeafPlaintextMatchesTheDefinition) {
  Kit kit(*ckks::Params::create(small_packed_literal(64)));
  Prng prng = testing::test_prng(7);
  const std::size_t d = 12, k = 9;  // B = 16, r = 4: leaves 0, 1 full, leaf 2 one row
  std::vector<float> rows(k * d);
  for (auto& v : rows) v = static_cast<float>(testing::uniform_pm1(prng) / 4);
  const auto layout = *make_layout(kit.params, Kernel::kPacked, d, k);
  // 16^-1 mod q: the t in [0, 16) with 16 | t q + 1 gives (t q + 1) / 16.
  const std::uint64_t b_inv = [&] {
    for (std::uint64_t t = 0;; ++t) {
      if ((t * kit.q().value() + 1) % 16 == 0) return (t * kit.q().value() + 1) / 16;
    }
  }();
  ASSERT_EQ(kit.q().mul(b_inv, 16), 1u);
  const int rho = *packed_row_log_scale(kit.params, kPackedDefaultRowNormBound);
  EXPECT_EQ(rho, static_cast<int>(std::floor(std::log2(static_cast<double>(kit.q().value())))) - 2 -
                     24 - 1);
  for (std::size_t leaf = 0; leaf < 3; ++leaf) {
    auto pt = *packed_leaf_plaintext(layout, kit.params, rows, 0, leaf, rho);
    Poly got(pt.poly().row(0), pt.poly().row(0) + 64);
    kit.params.ntt(0).inverse(got.data());
    Poly want(64, 0);
    for (std::size_t row = 0; row < 4 && leaf * 4 + row < k; ++row) {
      for (std::size_t a = 0; a < d; ++a) {
        const double v = std::round(std::ldexp(rows[(leaf * 4 + row) * d + a], rho));
        want[16 * row + a] = kit.q().mul(kit.q().from_signed(static_cast<std::int64_t>(v)), b_inv);
      }
    }
    EXPECT_EQ(got, want) << "leaf " << leaf;
  }
}

TEST(PackedKernel, ReferenceTreeKeepsExactlyTheScoreCoefficients) {
  // On plaintext polynomials the tree is exact: each leaf's coefficients B k land at
  // B k + i B / 2^l multiplied by B, every other coefficient of the root is zero.
  const auto params = *ckks::Params::create(small_packed_literal(64));
  const ring::Modulus& q = params.q_moduli()[0];
  Prng prng = testing::test_prng(8);
  for (std::size_t leaves_n : {1u, 2u, 3u, 5u, 8u, 16u}) {
    const std::size_t block = 16, r = 4;
    const std::size_t levels = static_cast<std::size_t>(std::bit_width(leaves_n - 1));
    std::vector<Poly> leaves(leaves_n, Poly(64));
    for (auto& l : leaves) {
      for (auto& c : l) c = q.reduce(prng.next_u64());
    }
    const Poly root = reference_pack(leaves, levels, r, block, q);
    Poly want(64, 0);
    for (std::size_t i = 0; i < leaves_n; ++i) {
      for (std::size_t k = 0; k < r; ++k) {
        want[block * k + i * (block >> levels)] = q.mul(leaves[i][block * k], block);
      }
    }
    EXPECT_EQ(root, want) << leaves_n << " leaves";
  }
}

TEST(PackedKernel, HomomorphicTreeIsTheReferenceUpToKeySwitchNoise) {
  Kit kit(*ckks::Params::create(small_packed_literal(64)));
  Prng prng = testing::test_prng(9);
  const std::size_t d = 10, k = 19;  // B = 16, r = 4, 5 leaves, l = 3
  std::vector<float> rows(k * d);
  for (auto& v : rows) v = static_cast<float>(testing::uniform_pm1(prng) / 4);
  const auto query = unit_vector(d, prng);
  const auto layout = *make_layout(kit.params, Kernel::kPacked, d, k);
  const auto keys = *make_rotation_keys(layout, kit.keygen, kit.sk, kit.prng);
  const auto ct = *encrypt_packed_query(layout, kit.params, kit.sk, query, kit.prng);
  const auto result = *evaluate_packed_kernel(layout, kit.evaluator, keys, ct, rows);
  EXPECT_EQ(result.key_switches, 7u);  // merges 3 + 2 + 1 over 5 leaves, one trace step
  // Reference: decrypt each leaf product's phase, pack the phases in plaintext.
  const ckks::Decryptor dec(kit.params);
  std::vector<Poly> leaf_phases(8, Poly(64, 0));  // by tree index brv_3(i)
  for (std::size_t i = 0; i < 5; ++i) {
    const int rho = *packed_row_log_scale(kit.params, kPackedDefaultRowNormBound);
    const auto pt = *packed_leaf_plaintext(layout, kit.params, rows, 0, i, rho);
    const auto prod = *kit.evaluator.multiply_plain(ct, pt);
    auto phase = *dec.decrypt(kit.sk, prod);
    Poly p(phase.poly().row(0), phase.poly().row(0) + 64);
    kit.params.ntt(0).inverse(p.data());
    const std::size_t index = ((i & 1) << 2) | (i & 2) | ((i >> 2) & 1);
    leaf_phases[index] = std::move(p);
  }
  const Poly want = reference_pack(leaf_phases, 3, 4, 16, kit.q());
  auto got_pt = *dec.decrypt(kit.sk, result.outputs[0]);
  Poly got(got_pt.poly().row(0), got_pt.poly().row(0) + 64);
  kit.params.ntt(0).inverse(got.data());
  std::int64_t worst = 0;
  for (std::size_t j = 0; j < 64; ++j) {
    worst = std::max(worst, std::abs(centred(kit.q().sub(got[j], want[j]), kit.q().value())));
  }
  EXPECT_GT(worst, 0);        // key switching adds noise...
  EXPECT_LT(worst, 1 << 16);  // ...of a few units per switch, far below the 2^42 scale
}

TEST(PackedResponse, ModulusSwitchMatchesWideIntegerReference) {
  const auto params = *ckks::Params::create(small_packed_literal(64));
  const std::uint64_t q = params.q_moduli()[0].value();
  Prng prng = testing::test_prng(10);
  ring::RnsPoly c0(64, 1, false), c1(64, 1, false);
  for (std::size_t j = 0; j < 64; ++j) {
    c0.row(0)[j] = prng.next_u64() % q;
    c1.row(0)[j] = j == 0 ? q - 1 : (j == 1 ? q / 2 : prng.next_u64() % q);
  }
  std::vector<std::uint64_t> coeff0(c0.row(0), c0.row(0) + 64), coeff1(c1.row(0), c1.row(0) + 64);
  params.ntt(0).forward(c0.row(0));
  params.ntt(0).forward(c1.row(0));
  c0.set_ntt(true);
  c1.set_ntt(true);
  const ckks::Ciphertext ct(params.id(), 0, std::ldexp(1.0, 42), std::move(c0), std::move(c1));
  const std::vector<std::size_t> positions{0, 5, 63};
  const auto packed = *compact_packed(params, ct, positions, {1.0, 14});
  // Reference: round-half-up written as one floor division, floor((2 x 2^b + q) / (2 q)) mod 2^b,
  // and the edge values q - 1 (rounds up to 2^b, i.e. 0) and q / 2 below.
  auto reference = [&](std::uint64_t x, int b) {
    const unsigned __int128 num = (static_cast<unsigned __int128>(x) << (b + 1)) + q;
    const auto y = static_cast<std::uint64_t>(num / (2 * static_cast<unsigned __int128>(q)));
    return y % (std::uint64_t{1} << b);
  };
  for (std::size_t i = 0; i < positions.size(); ++i) {
    EXPECT_EQ(packed.c0[i], reference(coeff0[positions[i]], packed.c0_bits));
  }
  for (std::size_t j = 0; j < 64; ++j)
    EXPECT_EQ(packed.c1[j], reference(coeff1[j], packed.c1_bits));
  EXPECT_EQ(packed.c1[0], 0u);  // q - 1 rounds up to 2^b, i.e. 0
}

TEST(PackedKernel, ScoresWithinErrorAtTheSecurePreset) {
  Kit kit(*ckks::Params::create(ckks::packed_n4096_literal()));
  Prng prng = testing::test_prng(11);
  const std::size_t d = 672, k = 100;
  const auto query = unit_vector(d, prng);
  std::vector<float> rows;
  for (std::size_t c = 0; c < k; ++c) {
    std::vector<double> row;
    if (c == 0)
      row = query;      // score 1
    else if (c == 1) {  // score -1
      row = query;
      for (auto& v : row) v = -v;
    } else if (c == 2) {  // all mass on one coordinate
      row.assign(d, 0.0);
      row[d - 1] = 1.0;
    } else if (c == 3) {  // norm at the kernel's bound
      row = query;
      for (auto& v : row) v *= kPackedDefaultRowNormBound * 0.999;
    } else {
      row = unit_vector(d, prng);
    }
    for (const double v : row) rows.push_back(static_cast<float>(v));
  }
  const auto s = score(kit, d, query, rows);
  EXPECT_LT(max_error(s), std::exp2(-16)) << "max error " << max_error(s);
  EXPECT_LE(s.key_switches, 32u);
  EXPECT_LT(s.response_bytes, 16000u);
}

TEST(PackedKernel, EdgeShapes) {
  Kit kit(*ckks::Params::create(small_packed_literal(64)));
  Prng prng = testing::test_prng(12);
  // (d', K): one coefficient, one candidate, exactly one leaf, a full output, two outputs.
  for (const auto& [d, k] : std::vector<std::pair<std::size_t, std::size_t>>{{1, 1},
                                                                             {1, 64},
                                                                             {16, 4},
                                                                             {32, 1},
                                                                             {17, 2},
                                                                             {12, 64},
                                                                             {12, 65},
                                                                             {5, 200},
                                                                             {32, 64},
                                                                             {32, 128}}) {
    const auto query = unit_vector(d, prng);
    const auto rows = unit_rows(k, d, prng);
    const auto s = score(kit, d, query, rows);
    // n = 64: less rounding noise than at n = 4096, the same bound applies.
    EXPECT_LT(max_error(s), std::exp2(-16)) << "d' = " << d << ", K = " << k;
  }
}

TEST(PackedKernel, OutputDoesNotDependOnTheThreadCount) {
  Kit kit(*ckks::Params::create(ckks::packed_n4096_literal()));
  Prng prng = testing::test_prng(16);
  const std::size_t d = 672, k = 100;
  const auto rows = unit_rows(k, d, prng);
  const auto layout = *make_layout(kit.params, Kernel::kPacked, d, k);
  const auto keys = *make_rotation_keys(layout, kit.keygen, kit.sk, kit.prng);
  const auto ct = *encrypt_packed_query(layout, kit.params, kit.sk, unit_vector(d, prng), kit.prng);
  const auto one = *evaluate_packed_kernel(layout, kit.evaluator, keys, ct, rows, 1);
  const auto two = *evaluate_packed_kernel(layout, kit.evaluator, keys, ct, rows, 2);
  ASSERT_EQ(one.outputs.size(), 1u);
  EXPECT_EQ(one.outputs[0].c0(), two.outputs[0].c0());
  EXPECT_EQ(one.outputs[0].c1(), two.outputs[0].c1());
  EXPECT_EQ(one.key_switches, two.key_switches);
}

TEST(PackedKernel, RefusesWhatItCannotScore) {
  Kit kit(*ckks::Params::create(small_packed_literal(64)));
  Prng prng = testing::test_prng(13);
  const auto layout = *make_layout(kit.params, Kernel::kPacked, 8, 3);
  const auto keys = *make_rotation_keys(layout, kit.keygen, kit.sk, kit.prng);
  const auto query = unit_vector(8, prng);
  const auto ct = *encrypt_packed_query(layout, kit.params, kit.sk, query, kit.prng);
  std::vector<float> rows(24, 0.5f);  // norm sqrt(2) is fine
  EXPECT_TRUE(evaluate_packed_kernel(layout, kit.evaluator, keys, ct, rows).ok());
  rows[0] = 3.0f;  // norm above 2
  EXPECT_EQ(evaluate_packed_kernel(layout, kit.evaluator, keys, ct, rows).status().code(),
            StatusCode::kInvalidArgument);
  rows[0] = std::nanf("");
  EXPECT_EQ(evaluate_packed_kernel(layout, kit.evaluator, keys, ct, rows).status().code(),
            StatusCode::kInvalidArgument);
  rows.assign(24, 0.1f);
  const auto few_keys = *kit.keygen.create_galois_keys(
      kit.sk, std::span<const int>(layout.rotation_steps()).first(2), false, kit.prng);
  EXPECT_EQ(evaluate_packed_kernel(layout, kit.evaluator, few_keys, ct, rows).status().code(),
            StatusCode::kNotFound);
  const std::vector<double> too_big(8, 1.5);
  EXPECT_EQ(encrypt_packed_query(layout, kit.params, kit.sk, too_big, kit.prng).status().code(),
            StatusCode::kInvalidArgument);
  // The slot kernels' preset cannot run the packed kernel (two levels, other scale).
  const auto slot_params = *ckks::Params::create(ckks::insecure_test_literal(64));
  const auto slot_layout = *make_layout(slot_params, Kernel::kPacked, 8, 3);
  const ckks::Evaluator slot_eval(slot_params);
  ckks::KeyGenerator slot_keygen(slot_params);
  const auto slot_sk = slot_keygen.create_secret_key(kit.prng);
  const auto slot_keys = *make_rotation_keys(slot_layout, slot_keygen, slot_sk, kit.prng);
  ckks::Ciphertext slot_ct = *encrypt_query(*make_layout(slot_params, Kernel::kFast, 8, 3),
                                            slot_params, slot_sk, query, kit.prng);
  EXPECT_EQ(
      evaluate_packed_kernel(slot_layout, slot_eval, slot_keys, slot_ct, rows).status().code(),
      StatusCode::kFailedPrecondition);
}

TEST(PackedResponse, DecoderRejectsMalformedBytes) {
  const auto params = *ckks::Params::create(small_packed_literal(64));
  PackedCiphertext ct;
  ct.params_id = params.id();
  ct.c0_bits = 20;
  ct.c1_bits = 17;
  // 2^(24 + rho) 2^k / q with rho = 17, k = 20 (the decoder checks this shape).
  ct.scale = std::ldexp(1.0, 24 + 17 + 20) / static_cast<double>(params.q_moduli()[0].value());
  ct.c0 = {1, 2, 3};
  ct.c1.assign(64, 5);
  const auto bytes = serialize_packed(ct);
  EXPECT_EQ(*deserialize_packed(params, bytes, 3), ct);
  EXPECT_EQ(deserialize_packed(params, bytes, 4).status().code(), StatusCode::kDataLoss);
  auto truncated = bytes;
  truncated.pop_back();
  EXPECT_EQ(deserialize_packed(params, truncated, 3).status().code(), StatusCode::kDataLoss);
  auto trailing = bytes;
  trailing.push_back(0);
  EXPECT_EQ(deserialize_packed(params, trailing, 3).status().code(), StatusCode::kDataLoss);
  auto magic = bytes;
  magic[0] ^= 1;
  EXPECT_EQ(deserialize_packed(params, magic, 3).status().code(), StatusCode::kDataLoss);
  auto width = bytes;
  width[4 + 2 + 32 + 1] = 60;  // b1 above the exact-product bound
  EXPECT_EQ(deserialize_packed(params, width, 3).status().code(), StatusCode::kDataLoss);
  for (const int b0 : {0, 46}) {  // b0 outside [1, bits(q)]
    auto w0 = bytes;
    w0[4 + 2 + 32] = static_cast<std::uint8_t>(b0);
    EXPECT_EQ(deserialize_packed(params, w0, 3).status().code(), StatusCode::kDataLoss);
  }
  // Scales that are not 2^(24 + rho) 2^k / q: a subnormal one would make every score infinite.
  for (const double bad : {1e-320, 1e-300, 3.0, ct.scale * 1.5, ct.scale * 0.5 * 1.0001}) {
    PackedCiphertext other = ct;
    other.scale = bad;
    EXPECT_EQ(deserialize_packed(params, serialize_packed(other), 3).status().code(),
              StatusCode::kDataLoss)
        << bad;
  }
  PackedCiphertext wrong_n = ct;
  wrong_n.c1.assign(32, 5);
  EXPECT_EQ(deserialize_packed(params, serialize_packed(wrong_n), 3).status().code(),
            StatusCode::kDataLoss);
  const auto other = *ckks::Params::create(ckks::packed_n4096_literal());
  EXPECT_FALSE(deserialize_packed(other, bytes, 3).ok());
}

}  // namespace
}  // namespace privsearch::rerank
