// Tests of the scoring build and its file formats: balanced clusters, padding, refused
// parameters and damaged files (scoring/).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <thread>

#include "scoring/answer.h"
#include "scoring/build.h"
#include "scoring/client/private_query.h"
#include "scoring/layout.h"
#include "scoring/scoring_test_util.h"

namespace privsearch::scoring {
namespace {

using test_util::clustered;
using test_util::test_options;

TEST(ScoringBuild, BalancedClustersHoldEveryDocumentOnce) {
  const auto x = clustered(700, 24, 5, 1);  // 5 natural clusters, 13 balanced ones
  auto a = build_scoring(x, test_options(), nullptr);
  ASSERT_TRUE(a.ok()) << a.status().message();
  const auto& s = a->layout.shape;
  EXPECT_EQ(s.documents, 700u);
  EXPECT_EQ(s.clusters, 13u);  // ceil(700 / (0.9 * 64))
  EXPECT_EQ(s.log_p, 14u);     // the default (worst case: 16 * 8 * 127 = 16,256 < 2^14, 15 bits)
  EXPECT_EQ(s.answer_bits, 15u);
  EXPECT_GT(a->layout.max_norm_sq, 0u);
  EXPECT_LE(a->layout.max_norm_sq, 16u * 64u);
  std::vector<int> seen(700, 0);
  for (std::uint32_t c = 0; c < s.clusters; ++c) {
    for (std::uint32_t r = 0; r < s.cluster_rows; ++r) {
      if (a->layout.doc_at(c, r) != kEmptySlot) ++seen[a->layout.doc_at(c, r)];
    }
  }
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int k) { return k == 1; }));
  EXPECT_LT(a->decoding_failure_log2, -40);
  // The artifacts survive their own formats.
  auto layout = parse_layout(serialize_layout(a->layout));
  ASSERT_TRUE(layout.ok()) << layout.status().message();
  EXPECT_EQ(layout->slot_doc, a->layout.slot_doc);
  EXPECT_EQ(layout->centroids, a->layout.centroids);
  EXPECT_EQ(layout->matrix_seed, derive_matrix_seed(layout->matrix_salt));
  EXPECT_EQ(layout->matrix_salt, a->layout.matrix_salt);
  auto matrix = parse_matrix(serialize_matrix(a->matrix));
  ASSERT_TRUE(matrix.ok());
  EXPECT_EQ(matrix->data, a->matrix.data);
  auto hint = parse_hint(serialize_hint(a->hint));
  ASSERT_TRUE(hint.ok());
  EXPECT_EQ(hint->values, a->hint.values);
}

// A small layout's hint would be LWE in too few columns (layout.h, kMinSecretColumns): it is
// padded with random columns to 2,048, which no score sees; a layout claiming fewer columns, or
// padding other than exactly that, is refused. The salt of A is random per build.
TEST(ScoringBuild, SmallLayoutsArePaddedToTheSecureSecretDimension) {
  const auto x = clustered(700, 16, 7, 3);
  auto a = build_scoring(x, test_options(), nullptr);
  ASSERT_TRUE(a.ok()) << a.status().message();
  const auto& s = a->layout.shape;
  ASSERT_LT(s.block_columns(), kMinSecretColumns);
  EXPECT_EQ(s.columns(), kMinSecretColumns);
  EXPECT_EQ(a->matrix.columns, kMinSecretColumns);
  // The padding is random 4-bit data (not zeros: zeros would add nothing to the secret).
  std::size_t nonzero = 0, seen = 0;
  for (std::size_t r = 0; r < a->matrix.rows; ++r) {
    for (std::size_t j = s.block_columns(); j < s.columns(); ++j) {
      const auto v = a->matrix.data[r * a->matrix.stride + j];
      EXPECT_LT(v, 1u << s.doc_bits);
      nonzero += v != 0;
      ++seen;
    }
  }
  EXPECT_GT(nonzero, seen * 9 / 10);
  // Shapes that break the rule are refused when read.
  auto thin = a->layout;
  thin.shape.pad_columns = 0;
  EXPECT_EQ(parse_layout(serialize_layout(thin)).status().code(), StatusCode::kInvalidArgument);
  auto fat = a->layout;
  fat.shape.pad_columns += 64;
  EXPECT_EQ(parse_layout(serialize_layout(fat)).status().code(), StatusCode::kInvalidArgument);
  // A second build of the same data has its own salt, so its own A.
  auto b = build_scoring(x, test_options(), nullptr);
  ASSERT_TRUE(b.ok());
  EXPECT_NE(a->layout.matrix_salt, b->layout.matrix_salt);
  EXPECT_NE(a->layout.matrix_seed, b->layout.matrix_seed);
  EXPECT_EQ(pad_columns_for(kMinSecretColumns + 5), 0u);
  EXPECT_EQ(pad_columns_for(672), kMinSecretColumns - 672);
}

TEST(ScoringFormats, AnswersPackAndUnpackAtEveryWidth) {
  // Property against the plain definition: value k of width b is bits [k b, k b + b) of the
  // little-endian stream, and unpacking gives switch(a) << (32 - b).
  Prng prng = Prng::from_seed(Seed{17});
  for (std::uint32_t bits = 9; bits <= 32; ++bits) {
    for (const std::size_t count :
         {std::size_t{1}, std::size_t{7}, std::size_t{64}, std::size_t{301}}) {
      std::vector<std::uint32_t> a(count);
      for (auto& v : a) v = static_cast<std::uint32_t>(prng.next_u64());
      a[0] = 0xffffffffu;  // rounds up past the top: wraps to 0
      const auto packed = pack_answers(a, bits);
      ASSERT_EQ(packed.size(), (count * bits + 7) / 8);
      for (std::size_t k = 0; k < count; ++k) {
        std::uint64_t got = 0;
        for (std::uint32_t i = 0; i < bits; ++i) {
          const std::size_t bit = k * bits + i;
          got |= std::uint64_t{(static_cast<std::uint8_t>(packed[bit / 8]) >> (bit % 8)) & 1u} << i;
        }
        ASSERT_EQ(got, pir::lwe64_switch_answer(a[k], static_cast<int>(bits))) << bits << " " << k;
      }
      std::vector<std::uint32_t> back;
      ASSERT_TRUE(unpack_answers(packed, count, bits, back));
      for (std::size_t k = 0; k < count; ++k) {
        ASSERT_EQ(back[k], bits == 32 ? a[k]
                                      : pir::lwe64_switch_answer(a[k], static_cast<int>(bits))
                                            << (32 - bits));
        // The rounding error is at most half a step.
        const auto err = static_cast<std::int32_t>(back[k] - a[k]);
        ASSERT_LE(std::abs(static_cast<std::int64_t>(err)),
                  bits == 32 ? 0 : std::int64_t{1} << (31 - bits));
      }
      EXPECT_FALSE(unpack_answers(packed.substr(1), count, bits, back));
      EXPECT_FALSE(unpack_answers(packed + '\0', count, bits, back));
      if ((count * bits) % 8 != 0) {
        auto padded = packed;
        padded.back() = static_cast<char>(padded.back() | 0x80);  // a padding bit set
        EXPECT_FALSE(unpack_answers(padded, count, bits, back)) << bits << " " << count;
      }
    }
  }
  EXPECT_EQ(pir::lwe64_switch_answer(0x80000000u, 16), 0x8000u);
  EXPECT_EQ(pir::lwe64_switch_answer(0x00007fffu, 16), 0u);
  EXPECT_EQ(pir::lwe64_switch_answer(0x00008000u, 16), 1u);
  EXPECT_EQ(pir::lwe64_switch_answer(0xffff8000u, 16), 0u);
}

TEST(ScoringBuild, RefusesUndecodableOrBadParameters) {
  const auto x = clustered(100, 64, 2, 7);
  auto o = test_options();
  o.doc_bits = 9;
  EXPECT_EQ(build_scoring(x, o, nullptr).status().code(), StatusCode::kInvalidArgument);
  o = test_options();
  o.query_bits = 17;
  EXPECT_EQ(build_scoring(x, o, nullptr).status().code(), StatusCode::kInvalidArgument);
  o = test_options();
  o.dim = 64;
  o.doc_bits = 8;
  o.query_bits = 16;  // worst case 64 * 128 * 32767 < 2^28: more than LWE decodes (2^20)
  o.score_bits = 21;
  EXPECT_EQ(build_scoring(x, o, nullptr).status().code(), StatusCode::kInvalidArgument);
  o.score_bits = kMinLogP - 1;
  EXPECT_EQ(build_scoring(x, o, nullptr).status().code(), StatusCode::kInvalidArgument);
  o.score_bits = 20;  // the norm bound keeps it exact
  EXPECT_TRUE(build_scoring(x, o, nullptr).ok());
  o = test_options();
  o.lwe_params = "insecure-test-n64-ternary";
  o.allow_insecure = false;
  EXPECT_EQ(build_scoring(x, o, nullptr).status().code(), StatusCode::kInvalidArgument);
  o = test_options();
  o.fill = 0;
  EXPECT_EQ(build_scoring(x, o, nullptr).status().code(), StatusCode::kInvalidArgument);
  o = test_options();
  o.overlap = 1.5;
  EXPECT_EQ(build_scoring(x, o, nullptr).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(build_scoring(index::Matrix{}, test_options(), nullptr).ok());
}

TEST(ScoringFormats, RefuseDamagedFiles) {
  auto a = build_scoring(clustered(250, 16, 2, 8), test_options(), nullptr);
  ASSERT_TRUE(a.ok());
  const auto layout = serialize_layout(a->layout);
  const auto matrix = serialize_matrix(a->matrix);
  const auto hint = serialize_hint(a->hint);
  for (std::size_t cut : {0ul, 4ul, 8ul, 40ul, layout.size() - 1}) {
    EXPECT_FALSE(parse_layout(std::span(layout).first(cut)).ok()) << cut;
  }
  EXPECT_FALSE(parse_matrix(std::span(matrix).first(matrix.size() - 1)).ok());
  EXPECT_FALSE(parse_hint(std::span(hint).first(hint.size() - 4)).ok());
  auto extra = layout;
  extra.push_back(0);
  EXPECT_FALSE(parse_layout(extra).ok());  // trailing bytes
  auto magic = hint;
  magic[0] = 'X';
  EXPECT_FALSE(parse_hint(magic).ok());
  auto version = matrix;
  version[4] = 1;  // the format before answer bits
  EXPECT_FALSE(parse_matrix(version).ok());
  // A document placed twice / out of range / missing.
  auto twice = a->layout;
  twice.slot_doc[1] = twice.slot_doc[0];
  EXPECT_FALSE(parse_layout(serialize_layout(twice)).ok());
  auto outside = a->layout;
  outside.slot_doc[0] = 250;
  EXPECT_FALSE(parse_layout(serialize_layout(outside)).ok());
  auto missing = a->layout;
  missing.slot_doc[0] = kEmptySlot;
  EXPECT_FALSE(parse_layout(serialize_layout(missing)).ok());
  auto wrong_p = a->layout;
  wrong_p.shape.log_p = 16;  // worst case 15 at dim 16, 4 / 8 bits
  wrong_p.shape.answer_bits = 17;
  EXPECT_FALSE(parse_layout(serialize_layout(wrong_p)).ok());  // above the worst case
  auto small_p = a->layout;
  small_p.shape.log_p = kMinLogP - 1;
  EXPECT_FALSE(parse_layout(serialize_layout(small_p)).ok());
  auto narrow = a->layout;
  narrow.shape.answer_bits = narrow.shape.log_p;
  EXPECT_FALSE(parse_layout(serialize_layout(narrow)).ok());
  auto wide = a->layout;
  wide.shape.answer_bits = 33;
  EXPECT_FALSE(parse_layout(serialize_layout(wide)).ok());
  auto norm = a->layout;
  norm.max_norm_sq = std::uint64_t{16} * 64 + 1;  // above dim 2^(2 (bd - 1))
  EXPECT_FALSE(parse_layout(serialize_layout(norm)).ok());
  auto answer_width = a->matrix;
  answer_width.answer_bits = 40;
  EXPECT_FALSE(parse_matrix(serialize_matrix(answer_width)).ok());
  // The stride padding of a row (columns not a multiple of 64) must be zero.
  ScoringMatrix padded;
  padded.rows = 2;
  padded.columns = 100;
  padded.stride = 128;
  padded.data.assign(2 * 128, 3);
  for (std::size_t r = 0; r < 2; ++r) std::fill_n(padded.data.begin() + r * 128 + 100, 28, 0);
  EXPECT_TRUE(parse_matrix(serialize_matrix(padded)).ok());
  padded.data[padded.columns] = 1;  // stride padding of row 0
  EXPECT_FALSE(parse_matrix(serialize_matrix(padded)).ok());
}

}  // namespace
}  // namespace privsearch::scoring
