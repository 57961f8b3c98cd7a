// The noise-flooding plan of one rerank output ciphertext (ckks/rerandomize.h, rerank/flooding.h):
// shared by ProviderCore::create, which checks the configured precision at start, and the
// rerank, which floods every output. Internal to protocol/.
#pragma once

#include <cstddef>

#include "ckks/rerandomize.h"
#include "core/status.h"
#include "protocol/provider_core.h"
#include "rerank/layout.h"

namespace privsearch::protocol::detail {

// The flooding plan for one output ciphertext of `layout`; message_coeff_bound as in
// ckks::plan_flooding (0 at create(): only the precision is checked there).
Result<ckks::FloodingPlan> flooding_plan(const ProviderConfig& config,
                                         const rerank::KernelLayout& layout, std::size_t level,
                                         double scale, double message_coeff_bound);

}  // namespace privsearch::protocol::detail
