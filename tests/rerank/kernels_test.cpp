#include "rerank/kernels.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ckks/client/decryptor.h"
#include "ckks/compact.h"
#include "ckks/param_sets.h"
#include "ckks/serialization.h"
#include "rerank/client/scores.h"
#include "testing/test_util.h"

namespace privsearch::rerank {
namespace {

// Random unit vectors: K rows and one query of dimension d.
struct Problem {
  std::vector<float> rows;
  std::vector<double> query;
  std::vector<double> expected;
};

Problem make_problem(std::size_t d, std::size_t k, std::uint64_t seed) {
  Prng prng = testing::test_prng(seed);
  const auto unit = [&](std::size_t n) { return testing::random_unit_vector(prng, n); };
  Problem p;
  p.query = unit(d);
  for (std::size_t c = 0; c < k; ++c) {
    const auto row = unit(d);
    double dot = 0;
    for (std::size_t j = 0; j < d; ++j) {
      p.rows.push_back(static_cast<float>(row[j]));
      dot += p.query[j] * static_cast<double>(static_cast<float>(row[j]));
    }
    p.expected.push_back(dot);
  }
  return p;
}

struct KernelKit {
  explicit KernelKit(const ckks::Params& p)
      : params(p),
        prng(testing::test_prng(900)),
        encoder(*ckks::Encoder::create(p)),
        keygen(p),
        sk(keygen.create_secret_key(prng)),
        evaluator(p) {}
  ckks::Params params;
  Prng prng;
  ckks::Encoder encoder;
  ckks::KeyGenerator keygen;
  ckks::SecretKey sk;
  ckks::Evaluator evaluator;
};

struct Run {
  KernelLayout layout;
  KernelResult result;
  std::vector<double> scores;
  double max_error = 0;
};

Run run(KernelKit& kit, Kernel kernel, std::size_t d, std::size_t k, std::uint64_t seed = 1) {
  const Problem p = make_problem(d, k, seed);
  Run r;
  r.layout = *make_layout(kit.params, kernel, d, k);
  const auto keys = *make_rotation_keys(r.layout, kit.keygen, kit.sk, kit.prng);
  const auto query = *encrypt_query(r.layout, kit.params, kit.sk, p.query, kit.prng);
  auto res = evaluate_kernel(r.layout, kit.encoder, kit.evaluator, keys, query, p.rows);
  // On a failure, report it and return NaN scores: every later comparison then fails instead of
  // the test dereferencing an error.
  r.scores.assign(k, std::nan(""));
  r.max_error = std::nan("");
  if (!res.ok()) {
    ADD_FAILURE() << res.status().to_string();
    return r;
  }
  r.result = std::move(res).value();
  auto scores = decrypt_scores(r.layout, kit.params, kit.sk, r.result.outputs);
  if (!scores.ok()) {
    ADD_FAILURE() << scores.status().to_string();
    return r;
  }
  r.scores = std::move(scores).value();
  r.max_error = 0;
  for (std::size_t c = 0; c < k; ++c) {
    r.max_error = std::fmax(r.max_error, std::fabs(r.scores[c] - p.expected[c]));
  }
  return r;
}

TEST(PaperKernels, OperationCountsMatchTable4) {
  KernelKit kit(*ckks::Params::create(ckks::paper_n8192_literal()));
  const auto naive = run(kit, Kernel::kNaive, 672, 100);
  EXPECT_EQ(naive.result.counts.multiply_plain, 100u);
  EXPECT_EQ(naive.result.counts.rescales, 100u);
  EXPECT_EQ(naive.result.counts.rotations, 1000u);
  EXPECT_EQ(naive.result.counts.additions, 1000u);
  EXPECT_EQ(naive.result.outputs.size(), 100u);
  const auto grouped = run(kit, Kernel::kGrouped, 672, 100);
  EXPECT_EQ(grouped.result.counts.multiply_plain, 25u);
  EXPECT_EQ(grouped.result.counts.rescales, 25u);
  EXPECT_EQ(grouped.result.counts.rotations, 250u);
  EXPECT_EQ(grouped.result.counts.additions, 250u);
  EXPECT_EQ(grouped.result.outputs.size(), 25u);
  const auto one = run(kit, Kernel::kOneResponse, 672, 100);
  EXPECT_EQ(one.result.counts.multiply_plain, 50u);
  EXPECT_EQ(one.result.counts.rescales, 25u);
  EXPECT_EQ(one.result.counts.rotations, 304u);
  EXPECT_EQ(one.result.counts.additions, 274u);
  EXPECT_EQ(one.result.outputs.size(), 1u);
  // The paper's slot map: group g, block b -> (1024 b - g) mod 4096.
  EXPECT_EQ(one.layout.slot_map()[4].slot, 4095u);
  EXPECT_EQ(one.layout.slot_map()[5].slot, 1023u);
  // All three agree with the plaintext scores (the paper's loose tolerance, 3e-5).
  EXPECT_LT(naive.max_error, 1e-5);
  EXPECT_LT(grouped.max_error, 1e-5);
  EXPECT_LT(one.max_error, 3e-5);  // the paper: 1.50e-5 at this size
  for (std::size_t c = 0; c < 100; ++c) {
    EXPECT_NEAR(naive.scores[c], grouped.scores[c], 2e-5);
    EXPECT_NEAR(grouped.scores[c], one.scores[c], 4e-5);
  }
}

TEST(FastKernel, UsesFarFewerRotationsAtThePapersSize) {
  KernelKit kit(*ckks::Params::create(ckks::rerank_n8192_literal()));
  const auto r = run(kit, Kernel::kFast, 672, 100);
  EXPECT_EQ(r.result.outputs.size(), 1u);
  // The paper's one-response kernel needs 304 rotations and 50 products here.
  EXPECT_LE(r.result.counts.rotations, 20u);
  EXPECT_LE(r.result.counts.multiply_plain, 25u);
  EXPECT_EQ(r.layout.rotation_steps().size(), r.result.counts.rotations);
  EXPECT_LT(r.max_error, 5e-6);
  EXPECT_GE(-std::log2(r.max_error), 17.6);
  // The key set the client uploads for this layout stays under 4 MB.
  const auto keys = *make_rotation_keys(r.layout, kit.keygen, kit.sk, kit.prng);
  EXPECT_LE(ckks::serialize_galois_keys(kit.params, keys).size(), 4000000u);
}

class FastKernelGrid : public ::testing::TestWithParam<std::tuple<std::size_t, std::size_t>> {};

TEST_P(FastKernelGrid, MatchesPlaintextDotProducts) {
  static KernelKit kit(*ckks::Params::create(ckks::rerank_n8192_literal()));
  const auto [d, k] = GetParam();
  const auto r = run(kit, Kernel::kFast, d, k, d * 7919 + k);
  EXPECT_LT(r.max_error, 5e-6) << "d' = " << d << " K = " << k;
  std::printf("d'=%zu K=%zu max_error=%.3g rotations=%zu products=%zu\n", d, k, r.max_error,
              r.result.counts.rotations, r.result.counts.multiply_plain);
  const std::size_t capacity = r.layout.capacity();
  EXPECT_EQ(r.result.outputs.size(), (k + capacity - 1) / capacity);
  if (k + d <= 3000) {
    EXPECT_EQ(r.result.outputs.size(), 1u) << "K fits one ciphertext but used more";
  }
}

INSTANTIATE_TEST_SUITE_P(Grid, FastKernelGrid,
                         ::testing::Combine(::testing::Values(1, 7, 64, 100, 672, 768, 1024),
                                            ::testing::Values(1, 3, 4, 100, 128, 129, 1024)));

TEST(FastKernel, MaskedSlotsDecryptToZero) {
  KernelKit kit(*ckks::Params::create(ckks::rerank_n8192_literal()));
  const auto r = run(kit, Kernel::kFast, 100, 10);
  const auto pt = *ckks::Decryptor(kit.params).decrypt(kit.sk, r.result.outputs[0]);
  const auto slots = *kit.encoder.decode(pt);
  std::vector<bool> is_score(slots.size(), false);
  for (const auto& ref : r.layout.slot_map()) is_score[ref.slot] = true;
  double max_other = 0;
  for (std::size_t s = 0; s < slots.size(); ++s) {
    if (!is_score[s]) max_other = std::fmax(max_other, std::fabs(slots[s]));
  }
  EXPECT_LT(max_other, 1e-5);
}

TEST(KernelValidation, RejectsBadInputs) {
  KernelKit kit(*ckks::Params::create(ckks::rerank_n8192_literal()));
  const auto layout = *make_layout(kit.params, Kernel::kFast, 64, 10);
  const Problem p = make_problem(64, 10, 5);
  const auto keys = *make_rotation_keys(layout, kit.keygen, kit.sk, kit.prng);
  const auto query = *encrypt_query(layout, kit.params, kit.sk, p.query, kit.prng);
  // Dimension mismatch: rows of the wrong size.
  std::vector<float> short_rows(p.rows.begin(), p.rows.end() - 1);
  EXPECT_EQ(
      evaluate_kernel(layout, kit.encoder, kit.evaluator, keys, query, short_rows).status().code(),
      StatusCode::kInvalidArgument);
  // Non-finite row value.
  auto bad = p.rows;
  bad[70] = std::nanf("");
  const auto nan_status =
      evaluate_kernel(layout, kit.encoder, kit.evaluator, keys, query, bad).status();
  EXPECT_EQ(nan_status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(nan_status.message().find("candidate 1"), std::string::npos);
  // Missing rotation key.
  const std::vector<int> one_step = {layout.rotation_steps().front()};
  const auto few = *kit.keygen.create_galois_keys(kit.sk, one_step, false, kit.prng);
  if (layout.rotation_steps().size() > 1) {
    EXPECT_EQ(
        evaluate_kernel(layout, kit.encoder, kit.evaluator, few, query, p.rows).status().code(),
        StatusCode::kNotFound);
  }
  // Query not at the top level.
  const auto low = *kit.evaluator.mod_switch_to_level(query, 1);
  EXPECT_EQ(evaluate_kernel(layout, kit.encoder, kit.evaluator, keys, low, p.rows).status().code(),
            StatusCode::kFailedPrecondition);
  // Wrong params.
  KernelKit other(*ckks::Params::create(ckks::ifma_n8192_literal()));
  EXPECT_EQ(
      evaluate_kernel(layout, other.encoder, other.evaluator, keys, query, p.rows).status().code(),
      StatusCode::kFailedPrecondition);
  // Layout limits.
  EXPECT_EQ(make_layout(kit.params, Kernel::kFast, 0, 10).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(make_layout(kit.params, Kernel::kFast, 4097, 10).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(make_layout(kit.params, Kernel::kOneResponse, 672, 5000).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(encrypt_query(layout, kit.params, kit.sk, std::vector<double>(63, 0.1), kit.prng)
                .status()
                .code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace privsearch::rerank

namespace privsearch::rerank {
namespace {

TEST(FastKernel, CompactResponseDecryptsToTheScores) {
  KernelKit kit(*ckks::Params::create(ckks::rerank_n8192_literal()));
  const Problem p = make_problem(672, 100, 77);
  const auto layout = *make_layout(kit.params, Kernel::kFast, 672, 100);
  const auto keys = *make_rotation_keys(layout, kit.keygen, kit.sk, kit.prng);
  const auto query = *encrypt_query(layout, kit.params, kit.sk, p.query, kit.prng);
  const auto result = *evaluate_kernel(layout, kit.encoder, kit.evaluator, keys, query, p.rows);
  const auto compacted = *ckks::compact(kit.params, result.outputs[0], {1.0, 18.0});
  const auto bytes = ckks::serialize_compact(compacted);
  EXPECT_LE(bytes.size(), 66000u);
  const auto back = *ckks::deserialize_compact(kit.params, bytes);
  const auto scores = *decrypt_compact_scores(layout, kit.params, kit.sk, std::span(&back, 1));
  double max_err = 0;
  for (std::size_t c = 0; c < 100; ++c)
    max_err = std::fmax(max_err, std::fabs(scores[c] - p.expected[c]));
  EXPECT_LT(max_err, 5e-6);
}

// The fast kernel's threads split independent giant-step groups and hoisted rotations; its
// sums are exact and in a fixed order, so every thread count gives the same ciphertext bytes
// and the same operation counts (shapes with one output, several outputs, and a partial last
// giant group).
TEST(FastKernel, ThreadsGiveTheSameBytesAndCounts) {
  KernelKit kit(*ckks::Params::create(ckks::rerank_n8192_literal()));
  for (const auto& [d, k] :
       {std::pair<std::size_t, std::size_t>{672, 100}, {100, 10}, {192, 700}}) {
    const Problem p = make_problem(d, k, d + k);
    const auto layout = *make_layout(kit.params, Kernel::kFast, d, k);
    const auto keys = *make_rotation_keys(layout, kit.keygen, kit.sk, kit.prng);
    const auto query = *encrypt_query(layout, kit.params, kit.sk, p.query, kit.prng);
    const auto one = evaluate_kernel(layout, kit.encoder, kit.evaluator, keys, query, p.rows, 1);
    ASSERT_TRUE(one.ok()) << one.status().to_string();
    for (const std::size_t threads : {2u, 3u, 8u}) {
      SCOPED_TRACE(::testing::Message() << "d' " << d << " K " << k << " threads " << threads);
      const auto many =
          evaluate_kernel(layout, kit.encoder, kit.evaluator, keys, query, p.rows, threads);
      ASSERT_TRUE(many.ok()) << many.status().to_string();
      ASSERT_EQ(many->outputs.size(), one->outputs.size());
      for (std::size_t o = 0; o < one->outputs.size(); ++o) {
        const auto a =
            *ckks::serialize_ciphertext(kit.params, one->outputs[o], ckks::CiphertextForm::kFull);
        const auto b =
            *ckks::serialize_ciphertext(kit.params, many->outputs[o], ckks::CiphertextForm::kFull);
        EXPECT_TRUE(a == b) << "output " << o << " differs";
      }
      EXPECT_EQ(many->counts.rotations, one->counts.rotations);
      EXPECT_EQ(many->counts.multiply_plain, one->counts.multiply_plain);
      EXPECT_EQ(many->counts.additions, one->counts.additions);
      EXPECT_EQ(many->counts.encodes, one->counts.encodes);
      EXPECT_EQ(many->counts.rescales, one->counts.rescales);
    }
  }
}

}  // namespace
}  // namespace privsearch::rerank
