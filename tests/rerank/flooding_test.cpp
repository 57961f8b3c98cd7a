// Noise flooding of rerank responses (ckks/rerandomize.h, rerank/flooding.h): the kernel's
// measured output noise stays under the model bound the provider floods against, flooded
// responses still decrypt to the scores within the predicted precision, and one request
// evaluated twice no longer gives one response.
#include "rerank/flooding.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <span>

#include "ckks/ckks_fixture.h"
#include "ckks/client/decryptor.h"
#include "ckks/client/keygen.h"
#include "ckks/internal/poly_util.h"
#include "ckks/param_sets.h"
#include "ckks/rerandomize.h"
#include "rerank/client/scores.h"
#include "rerank/kernels.h"
#include "testing/test_util.h"

namespace privsearch::rerank {
namespace {

using FloodKit = testing::CkksKit;

struct Output {
  KernelLayout layout;
  std::vector<ckks::Ciphertext> cts;
  std::vector<double> expected;
};

Output run_fast(FloodKit& s, std::size_t d, std::size_t k) {
  const auto z = testing::random_unit_vector(s.prng, d);
  std::vector<float> rows(k * d);
  Output o;
  for (std::size_t c = 0; c < k; ++c) {
    double rn = 0;
    std::vector<double> r(d);
    for (auto& x : r) {
      x = testing::uniform_pm1(s.prng);
      rn += x * x;
    }
    double dot = 0;
    for (std::size_t j = 0; j < d; ++j) {
      rows[c * d + j] = static_cast<float>(r[j] / std::sqrt(rn));
      dot += z[j] * static_cast<double>(rows[c * d + j]);
    }
    o.expected.push_back(dot);
  }
  o.layout = *make_layout(s.params, Kernel::kFast, d, k);
  const auto keys = *make_rotation_keys(o.layout, s.keygen, s.sk, s.prng);
  const auto query = *encrypt_query(o.layout, s.params, s.sk, z, s.prng);
  o.cts = evaluate_kernel(o.layout, s.encoder, s.evaluator, keys, query, rows)->outputs;
  return o;
}

// ||decrypt(ct) - encode(ideal slots)||_2 in the coefficient domain (level-0 residues centred).
double noise_l2_log2(FloodKit& s, const Output& o, std::size_t which) {
  const auto& ct = o.cts[which];
  std::vector<double> ideal(s.params.slots(), 0.0);
  for (std::size_t c = 0; c < o.layout.slot_map().size(); ++c) {
    if (o.layout.slot_map()[c].ciphertext == which)
      ideal[o.layout.slot_map()[c].slot] = o.expected[c];
  }
  auto pt = *ckks::Decryptor(s.params).decrypt(s.sk, ct);
  auto want = *s.encoder.encode(ideal, ct.level(), ct.scale());
  auto a = pt.poly(), b = want.poly();
  const auto rows = ckks::key_rows(s.params, ct.level(), false);
  ckks::from_ntt(s.params, rows, a);
  ckks::from_ntt(s.params, rows, b);
  const auto q = s.params.q_moduli()[0].value();
  double sum = 0;
  for (std::size_t j = 0; j < s.params.n(); ++j) {
    std::uint64_t d = (a.row(0)[j] + q - b.row(0)[j]) % q;
    const double v = d > q / 2 ? -static_cast<double>(q - d) : static_cast<double>(d);
    sum += v * v;
  }
  return 0.5 * std::log2(sum);
}

TEST(Flooding, KernelNoiseStaysUnderTheModelBound) {
  FloodKit s(*ckks::Params::create(ckks::rerank_n8192_literal()), 71);
  for (const auto& [d, k] : std::vector<std::pair<std::size_t, std::size_t>>{
           {64, 10}, {256, 100}, {768, 100}, {1024, 1024}}) {
    const auto o = run_fast(s, d, k);
    const double bound = *fast_kernel_noise_l2_log2(o.layout, s.params);
    for (std::size_t w = 0; w < o.cts.size(); ++w) {
      const double measured = noise_l2_log2(s, o, w);
      std::printf("d'=%zu K=%zu ct %zu: ||e||_2 = 2^%.2f, model bound 2^%.2f\n", d, k, w, measured,
                  bound);
      EXPECT_LT(measured, bound) << "d' = " << d << " K = " << k;
      EXPECT_GT(measured, bound - 6) << "the model bound is too loose to be useful";
    }
  }
}

double max_score_error(FloodKit& s, const Output& o, std::span<const ckks::Ciphertext> cts) {
  const auto scores = *decrypt_scores(o.layout, s.params, s.sk, {cts.begin(), cts.end()});
  double m = 0;
  for (std::size_t c = 0; c < scores.size(); ++c)
    m = std::fmax(m, std::fabs(scores[c] - o.expected[c]));
  return m;
}

TEST(Flooding, FloodedResponsesDecryptWithinThePredictedPrecision) {
  FloodKit s(*ckks::Params::create(ckks::rerank_n8192_literal()), 72);
  const auto o = run_fast(s, 256, 100);
  const auto& ct = o.cts[0];
  const double bound = *fast_kernel_noise_l2_log2(o.layout, s.params);
  const int lambda = 6;
  const auto plan = ckks::plan_flooding(s.params, ct.level(), ct.scale(), 1.0, lambda, bound);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  EXPECT_NEAR(plan->sigma_log2, bound + lambda - 0.5 * std::log2(2 * std::numbers::pi), 1e-9);
  std::printf("lambda=%d: sigma_f = 2^%.2f, predicted precision %.2f bits (unflooded error %.3g)\n",
              lambda, plan->sigma_log2, plan->precision_bits, max_score_error(s, o, o.cts));
  const auto a = *ckks::rerandomize(s.params, ct, s.pk, *plan, s.prng);
  const auto b = *ckks::rerandomize(s.params, ct, s.pk, *plan, s.prng);
  EXPECT_FALSE(a == b) << "two re-randomizations of one response must differ";
  EXPECT_FALSE(a.c1() == ct.c1()) << "c1 must be re-randomized too";
  for (const auto* f : {&a, &b}) {
    const double err = max_score_error(s, o, std::span(f, 1));
    EXPECT_LT(err, std::exp2(-plan->precision_bits));
    // The flood really is there: the decrypted noise norm is about sigma_f sqrt(n).
    Output flooded = o;
    flooded.cts = {*f};
    const double measured = noise_l2_log2(s, flooded, 0);
    EXPECT_NEAR(measured, plan->sigma_log2 + 0.5 * std::log2(static_cast<double>(s.params.n())),
                0.1);
  }
}

TEST(Flooding, PlanRefusesWhatDoesNotFitAndNamesTheLargestLambda) {
  const auto params = *ckks::Params::create(ckks::rerank_n8192_literal());
  const double scale = std::exp2(32);
  const auto too_much = ckks::plan_flooding(params, 0, scale, 1.0, 40, 12.0);
  ASSERT_EQ(too_much.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(too_much.status().message().find("at most"), std::string::npos);
  // The largest lambda the message names does fit, one more does not.
  const std::string msg = too_much.status().message();
  const int max_lambda = std::stoi(msg.substr(msg.find("at most") + 8));
  EXPECT_TRUE(ckks::plan_flooding(params, 0, scale, 1.0, max_lambda, 12.0).ok()) << msg;
  EXPECT_FALSE(ckks::plan_flooding(params, 0, scale, 1.0, max_lambda + 1, 12.0).ok());
  EXPECT_EQ(ckks::plan_flooding(params, 0, scale, 1.0, 0, 12.0).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ckks::plan_flooding(params, 7, scale, 1.0, 8, 12.0).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ckks::plan_flooding(params, 0, scale, 1.0, 8, std::nan("")).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(Flooding, RerandomizeChecksItsInputs) {
  FloodKit s(*ckks::Params::create(ckks::rerank_n8192_literal()), 73);
  const auto o = run_fast(s, 64, 10);
  const auto& ct = o.cts[0];
  auto plan = *ckks::plan_flooding(s.params, ct.level(), ct.scale(), 1.0, 4, 12.0);
  plan.level = ct.level() + 1;
  EXPECT_EQ(ckks::rerandomize(s.params, ct, s.pk, plan, s.prng).status().code(),
            StatusCode::kFailedPrecondition);
  FloodKit other(testing::insecure_params(1024), 74);
  plan.level = ct.level();
  EXPECT_EQ(ckks::rerandomize(s.params, ct, other.pk, plan, s.prng).status().code(),
            StatusCode::kFailedPrecondition);
  // Only the fast kernel on params that rescale the mask has a noise model.
  const auto paper = *ckks::Params::create(ckks::paper_n8192_literal());
  EXPECT_EQ(
      fast_kernel_noise_l2_log2(*make_layout(paper, Kernel::kFast, 64, 10), paper).status().code(),
      StatusCode::kFailedPrecondition);
  EXPECT_EQ(fast_kernel_noise_l2_log2(*make_layout(s.params, Kernel::kNaive, 64, 10), s.params)
                .status()
                .code(),
            StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace privsearch::rerank
