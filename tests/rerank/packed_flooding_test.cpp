// Noise flooding of the packed kernel (rerank/flooding.h): the measured noise at the score
// coefficients stays under the model bound (and within 6 bits of it), flooded responses decode
// within the plan's precision, and the plan refuses a lambda that does not fit, naming the
// largest that does.
#include <gtest/gtest.h>

#include <cmath>

#include "ckks/rerandomize.h"
#include "rerank/flooding.h"
#include "rerank/packed_fixture.h"

namespace privsearch::rerank {
namespace {

using namespace testing_packed;

// The noise a client could read at the score coefficients: phase - 2^(24 + rho) <z, x>.
double score_noise_l2_log2(Kit& kit, const KernelLayout& layout, const ckks::Ciphertext& out,
                           const std::vector<double>& z, const std::vector<float>& rows,
                           double row_norm_bound) {
  const double row_scale = std::ldexp(1.0, *packed_row_log_scale(kit.params, row_norm_bound));
  const ckks::Decryptor dec(kit.params);
  auto pt = *dec.decrypt(kit.sk, out);
  Poly phase(pt.poly().row(0), pt.poly().row(0) + kit.params.n());
  kit.params.ntt(0).inverse(phase.data());
  const std::uint64_t q = kit.q().value();
  // Against the real score at the output scale: the rounding of rows and query is noise too.
  const double scale = std::ldexp(row_scale, kit.params.log_scale());
  double sq = 0;
  for (std::size_t c = 0; c < layout.k(); ++c) {
    double dot = 0;
    for (std::size_t a = 0; a < layout.dim(); ++a) dot += z[a] * rows[c * layout.dim() + a];
    const double e =
        static_cast<double>(centred(phase[layout.slot_map()[c].slot], q)) - scale * dot;
    sq += e * e;
  }
  return 0.5 * std::log2(sq);
}

TEST(PackedFlooding, KernelNoiseStaysUnderTheModelBound) {
  Kit kit(*ckks::Params::create(ckks::packed_n4096_literal()));
  Prng prng = testing::test_prng(14);
  for (const std::size_t k : {1u, 100u, 1024u}) {
    const auto z = unit_vector(672, prng);
    const auto rows = unit_rows(k, 672, prng);
    const auto layout = *make_layout(kit.params, Kernel::kPacked, 672, k);
    const auto keys = *make_rotation_keys(layout, kit.keygen, kit.sk, kit.prng);
    const auto ct = *encrypt_packed_query(layout, kit.params, kit.sk, z, kit.prng);
    const auto result = *evaluate_packed_kernel(layout, kit.evaluator, keys, ct, rows, 2);
    const double measured =
        score_noise_l2_log2(kit, layout, result.outputs[0], z, rows, kPackedDefaultRowNormBound);
    const double bound =
        *packed_kernel_noise_l2_log2(layout, kit.params, kPackedDefaultRowNormBound);
    EXPECT_LT(measured, bound) << "K = " << k;
    EXPECT_GT(measured, bound - 6) << "K = " << k << ": the model is too loose to price flooding";
  }
}

TEST(PackedFlooding, FloodedResponsesDecryptWithinThePredictedPrecision) {
  Kit kit(*ckks::Params::create(ckks::packed_n4096_literal()));
  Prng prng = testing::test_prng(15);
  const std::size_t d = 672, k = 100;
  const auto z = unit_vector(d, prng);
  const auto rows = unit_rows(k, d, prng);
  const auto layout = *make_layout(kit.params, Kernel::kPacked, d, k);
  const auto keys = *make_rotation_keys(layout, kit.keygen, kit.sk, kit.prng);
  const auto pk = *kit.keygen.create_public_key(kit.sk, kit.prng);
  const auto ct = *encrypt_packed_query(layout, kit.params, kit.sk, z, kit.prng);
  const auto result = *evaluate_packed_kernel(layout, kit.evaluator, keys, ct, rows, 1, 1.0);
  const auto plan = *plan_packed_flooding(kit.params, layout, 4, 1.0, 1.0);
  EXPECT_GT(plan.precision_bits, 8.0);
  const auto flooded = *ckks::rerandomize(kit.params, result.outputs[0], pk, plan, kit.prng);
  const double flood_bound = 1.0 + 8.0 * std::exp2(plan.sigma_log2) / flooded.scale();
  const auto positions = packed_positions(layout, 0);
  const auto packed =
      *compact_packed(kit.params, flooded, positions, {flood_bound, plan.precision_bits + 2});
  const std::vector<PackedCiphertext> outs{packed};
  const auto scores = *decrypt_packed_scores(layout, kit.params, kit.sk, outs);
  double worst = 0;
  for (std::size_t c = 0; c < k; ++c) {
    double dot = 0;
    for (std::size_t a = 0; a < d; ++a) dot += z[a] * rows[c * d + a];
    worst = std::max(worst, std::fabs(scores[c] - dot));
  }
  EXPECT_LT(worst, std::exp2(-plan.precision_bits + 1));
  // The flood is really there: far more error than the unflooded 2^-19.
  EXPECT_GT(worst, std::exp2(-plan.precision_bits - 6));
}

TEST(PackedFlooding, PlanRefusesWhatDoesNotFitAndNamesTheLargestLambda) {
  const auto params = *ckks::Params::create(ckks::packed_n4096_literal());
  const auto layout = *make_layout(params, Kernel::kPacked, 672, 100);
  const auto refused = plan_packed_flooding(params, layout, 40, 1.0, 1.0);
  ASSERT_EQ(refused.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(refused.status().message().find("largest that fits is"), std::string::npos);
  int largest = 0;
  for (int lambda = 1; lambda <= 40; ++lambda) {
    if (plan_packed_flooding(params, layout, lambda, 1.0, 1.0).ok()) largest = lambda;
  }
  EXPECT_GE(largest, 8);
  EXPECT_NE(refused.status().message().find("is " + std::to_string(largest)), std::string::npos);
  EXPECT_EQ(plan_packed_flooding(params, layout, 0, 1.0, 1.0).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace privsearch::rerank
