// The paper's three kernels over the grid of d' and K (slow: up to a thousand rotations per
// case on the paper's preset). Label `slow`; run with `make test-slow`.
#include <gtest/gtest.h>

#include <cmath>

#include "ckks/param_sets.h"
#include "rerank/client/scores.h"
#include "rerank/kernels.h"
#include "testing/test_util.h"

namespace privsearch::rerank {
namespace {

class PaperKernelGrid
    : public ::testing::TestWithParam<std::tuple<Kernel, std::size_t, std::size_t>> {};

TEST_P(PaperKernelGrid, MatchesPlaintextDotProducts) {
  static const ckks::Params params = *ckks::Params::create(ckks::paper_n8192_literal());
  static Prng prng = testing::test_prng(990);
  static const ckks::Encoder encoder = *ckks::Encoder::create(params);
  static const ckks::Evaluator evaluator(params);
  static const ckks::KeyGenerator keygen(params);
  static const ckks::SecretKey sk = keygen.create_secret_key(prng);
  const auto [kernel, d, k] = GetParam();
  const auto layout = make_layout(params, kernel, d, k);
  ASSERT_TRUE(layout.ok()) << layout.status().to_string();
  const auto unit = [&](std::size_t n) { return testing::random_unit_vector(prng, n); };
  const auto z = unit(d);
  std::vector<float> rows;
  std::vector<double> expected;
  for (std::size_t c = 0; c < k; ++c) {
    const auto r = unit(d);
    double dot = 0;
    for (std::size_t j = 0; j < d; ++j) {
      rows.push_back(static_cast<float>(r[j]));
      dot += z[j] * static_cast<double>(static_cast<float>(r[j]));
    }
    expected.push_back(dot);
  }
  const auto keys = *make_rotation_keys(*layout, keygen, sk, prng);
  const auto query = *encrypt_query(*layout, params, sk, z, prng);
  const auto result = evaluate_kernel(*layout, encoder, evaluator, keys, query, rows);
  ASSERT_TRUE(result.ok()) << result.status().to_string();
  const auto scores = *decrypt_scores(*layout, params, sk, result->outputs);
  double max_err = 0;
  for (std::size_t c = 0; c < k; ++c)
    max_err = std::fmax(max_err, std::fabs(scores[c] - expected[c]));
  // The paper's tolerances: atol 1e-5 for naive/grouped; one_response masks at 2^19 (3e-5 in
  // the paper; its mask rounding scales with the other groups' garbage, so allow 2e-4).
  const double bound = kernel == Kernel::kOneResponse ? 2e-4 : 1e-5;
  EXPECT_LT(max_err, bound) << kernel_name(kernel) << " d' = " << d << " K = " << k;
}

INSTANTIATE_TEST_SUITE_P(Grid, PaperKernelGrid,
                         ::testing::Combine(::testing::Values(Kernel::kNaive, Kernel::kGrouped,
                                                              Kernel::kOneResponse),
                                            ::testing::Values(1, 7, 64, 100, 672, 768, 1024),
                                            ::testing::Values(1, 3, 4, 100, 128, 129)));

}  // namespace
}  // namespace privsearch::rerank
