// Named CKKS parameter presets. Provenance of each is in docs/PARAMETERS.md.
//
// - "paper-n8192": the search paper's record (hybrid-search-reference.md Table 3): n = 8192,
//   q = [60, 40] bits, P = [60] bits, delta = 2^40, ternary secret, CBD(21) noise. SEAL's prime
//   rule reproduces its primes 1152921504606748673, 1099511480321 and 1152921504606830593.
//   log2(QP) = 160 <= 218 (HE standard, n = 8192).
// - "ifma-n8192": same ring and security, every prime below 2^50 so the AVX-512 IFMA kernels
//   apply: q = [50, 40, 40], P = [50], delta = 2^40; log2(QP) = 180 <= 218. The extra 40-bit
//   prime gives the level that a 50-bit q_0 lacks for masks at delta scale.
// - "rerank-n8192": the fast rerank kernel's preset. Two multiplicative levels (row products,
//   then the score mask) at delta = 2^32: q = [35, 32, 32] bits (99 bits: a seeded query is
//   101.5 kB), P = [50, 50] bits >= Q with one key-switching digit (dnum = 1: a Galois key is
//   one digit over 199 bits, about 204 kB per step), every prime below 2^50 (IFMA).
//   log2(QP) = 199 <= 218. Rescaling and ModDown each round c1 by +-1/2, which times s is
//   ~2^11 slot units (std): the kernel keeps rotations at scale delta^2 where possible so that
//   only the two rescales' rounding reaches the scores (~2^-20 of delta).
// - "packed-n4096": the packed rerank kernel's preset (rerank/packed.h): coefficient-encoded
//   query, no rotation of the query, the K scores gathered into one ciphertext by CDKS packing
//   (log2 of the block length key switchings keys). One data prime q = 45 bits (a seeded query is
//   23 kB), P = 49 bits >= q (one digit), log2(QP) = 94 <= 109 (HE standard, n = 4096); delta =
//   2^24 is the query's coefficient scale, the rows are encoded at 2^18 (rerank/packed.h).
// - "insecure-test-n64" etc.: tiny rings for unit tests only; marked insecure, never accepted
//   by the service.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ckks/params.h"
#include "core/status.h"

namespace privsearch::ckks {

inline constexpr std::string_view kPaperPresetName = "paper-n8192";
inline constexpr std::string_view kIfmaPresetName = "ifma-n8192";
inline constexpr std::string_view kRerankPresetName = "rerank-n8192";
inline constexpr std::string_view kPackedPresetName = "packed-n4096";
// What a provider serves unless told otherwise (privsearch-provider --preset).
inline constexpr std::string_view kDefaultServicePreset = kPackedPresetName;

ParamsLiteral paper_n8192_literal();
ParamsLiteral ifma_n8192_literal();
ParamsLiteral rerank_n8192_literal();
ParamsLiteral packed_n4096_literal();
// Insecure: n in [16, 1024], q = [50, 40, 40], P = [50]; for tests and fuzzing only.
ParamsLiteral insecure_test_literal(std::size_t n);

// The secure presets by name (kNotFound for unknown names, listing the known ones).
Result<ParamsLiteral> preset_literal(std::string_view name);
std::vector<std::string> preset_names();

}  // namespace privsearch::ckks
