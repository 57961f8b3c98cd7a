// The provider's half of access-private scoring: D v for m switched queries (pir/lwe/lwe64.h),
// each answer rounded to the matrix's answer_bits and packed (the PrivateScoreResponse.answers
// wire form, scoring/layout.h). Shared by the provider core and the offline tools, so the bytes
// a test or an evaluation decodes are the provider's own.
// Thread safety: pure.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "scoring/layout.h"

namespace privsearch::scoring {

// `queries`: m x matrix.stride entries, zero past matrix.columns (the caller checks).
std::string answer_private_queries(const ScoringMatrix& matrix,
                                   std::span<const std::uint64_t> queries, std::size_t m);

}  // namespace privsearch::scoring
