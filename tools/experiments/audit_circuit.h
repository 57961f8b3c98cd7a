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

Result<nlohmann::json> run_circuit_privacy_audit(std::size_t repeats = 20, std::uint64_t seed = 2026,
                                                 int flood_bits = 4);

}  // namespace privsearch::tools
