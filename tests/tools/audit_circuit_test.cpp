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
  const auto& j = r.value();
  EXPECT_EQ(j["fixed_request_unique_response_hashes"], 1);
  EXPECT_EQ(j["fresh_encryption_unique_response_hashes"], 4);
  EXPECT_LT(j["max_abs_error"].get<double>(), 1e-4);
  const auto& f = j["rerandomized"];
  EXPECT_EQ(f["fixed_request_unique_response_hashes"], 4);
  EXPECT_EQ(f["fresh_encryption_unique_response_hashes"], 4);
  EXPECT_EQ(f["flood_security_bits"], 4);
  EXPECT_GT(f["predicted_precision_bits"].get<double>(), 4.0);
  EXPECT_LT(f["max_abs_error"].get<double>(),
            std::exp2(-f["predicted_precision_bits"].get<double>()));
  EXPECT_GT(f["public_key_bytes"].get<std::size_t>(), 0u);
  // The preset's affordable security shrinks as the required precision grows.
  EXPECT_GE(j["max_flood_bits_8bit_precision"].get<int>(),
            j["max_flood_bits_12bit_precision"].get<int>());
}

}  // namespace
}  // namespace privsearch::tools
