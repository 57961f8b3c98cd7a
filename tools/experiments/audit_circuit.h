// The circuit-privacy boundary (search paper section 4.4; reference notes 4.4): the provider's
// evaluation is deterministic, so one encrypted request evaluated again gives a byte-identical
// response, while fresh encryptions of the same query give distinct responses. No output
// re-randomization (noise flooding) is applied, so circuit privacy (hiding the provider's rows
// beyond the scores from a client inspecting the noise) is not claimed by default. The same
// audit runs the provider's optional re-randomization (--flood-bits, ckks/rerandomize.h) and
// reports its cost: time, bytes, precision, and the largest security the preset affords.
// Runs in process on the real rerank-n8192 parameters with a seeded synthetic store (d = 32,
// K = 8, 20 repeats, as the paper's audit).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "core/status.h"

namespace privsearch::tools {

// One provider configuration: `repeats` evaluations of one request and of fresh encryptions.
struct CircuitVariant {
  std::size_t fixed_request_unique_response_hashes = 0;
  std::size_t fresh_encryption_unique_response_hashes = 0;
  double max_abs_error = 0, provider_ms_median = 0;
  std::size_t response_bytes = 0;
  // With flooding only (flood_security_bits > 0):
  int flood_security_bits = 0;
  double noise_l2_bound_log2 = 0, flood_sigma_log2 = 0, predicted_precision_bits = 0;
  std::size_t public_key_bytes = 0;
  nlohmann::json to_json() const;
};

struct CircuitAuditResult {
  std::size_t dim = 0, k = 0, repeats = 0;
  CircuitVariant deterministic, rerandomized;
  // What the preset affords at the paper's shape (d' = 672, K = 100) with 8 and 12 bits left.
  int max_flood_bits_8bit_precision = 0, max_flood_bits_12bit_precision = 0;
  // The JSON of the audit's `circuit_privacy` section (field names are an interface).
  nlohmann::json to_json() const;
};

Result<CircuitAuditResult> run_circuit_privacy_audit(std::size_t repeats = 20,
                                                     std::uint64_t seed = 2026, int flood_bits = 4);

}  // namespace privsearch::tools
