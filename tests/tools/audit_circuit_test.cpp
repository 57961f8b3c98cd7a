// The circuit-privacy audit: deterministic evaluation by default, distinct responses for one
// request with the provider's flooding option, scores within the predicted precision.
#include "experiments/audit_circuit.h"

#include <gtest/gtest.h>

#include <cmath>

namespace privsearch::tools {
namespace {

TEST(CircuitAudit, FloodingBreaksDeterminismAndKeepsThePredictedPrecision) {
  const auto r = run_circuit_privacy_audit(4, 7, 4);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const auto& d = r->deterministic;
  EXPECT_EQ(d.fixed_request_unique_response_hashes, 1u);
  EXPECT_EQ(d.fresh_encryption_unique_response_hashes, 4u);
  EXPECT_LT(d.max_abs_error, 1e-4);
  const auto& f = r->rerandomized;
  EXPECT_EQ(f.fixed_request_unique_response_hashes, 4u);
  EXPECT_EQ(f.fresh_encryption_unique_response_hashes, 4u);
  EXPECT_EQ(f.flood_security_bits, 4);
  EXPECT_GT(f.predicted_precision_bits, 4.0);
  EXPECT_LT(f.max_abs_error, std::exp2(-f.predicted_precision_bits));
  EXPECT_GT(f.public_key_bytes, 0u);
  // The preset's affordable security shrinks as the required precision grows.
  EXPECT_GE(r->max_flood_bits_8bit_precision, r->max_flood_bits_12bit_precision);
  // The JSON keeps the fields the report and scripts read.
  const auto j = r->to_json();
  EXPECT_EQ(j["fixed_request_unique_response_hashes"], 1);
  EXPECT_EQ(j["rerandomized"]["flood_security_bits"], 4);
  EXPECT_FALSE(j.contains("flood_security_bits"));  // the deterministic variant has none
  EXPECT_DOUBLE_EQ(j["rerandomized"]["provider_ms_overhead"].get<double>(),
                   f.provider_ms_median - d.provider_ms_median);
}

}  // namespace
}  // namespace privsearch::tools
