// Wire format of the hintless backend: one query (the first-layer vector c1 and the packing key)
// and one response (rho switched ciphertexts). Little-endian, bit-packed residues (core/bytes.h).
//
//   query    := u32 magic "HPQ1" | u32 params id | u64 columns d0
//               | c1 mod q_a (d0 x 28 bits) | c1 mod q_b (d0 x 28 bits)
//               | key b-rows mod q_a ((log d) t d x 28 bits) | key b-rows mod q_b (same)
//   response := u32 magic "HPR1" | u32 params id | u32 outputs rho
//               | rho x ( a' (d x 28 bits, < q_a) | b' (d x 20 bits) )
// Every length is fixed by (params, shape), so decoders check the exact size before they
// allocate, every residue against its prime, and refuse trailing bytes.
// Sizes at d = 2048: query 7 d0 + 473,088 bytes; response 12,288 bytes per output.
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"
#include "pir/hintless/database.h"
#include "pir/hintless/params.h"

namespace privsearch::pir::hintless {

struct HintlessQuery {
  std::uint32_t params_id = 0;
  std::uint64_t columns = 0;
  std::vector<std::uint32_t> c1;     // 2 d0: residues mod q_a, then mod q_b
  std::vector<std::uint32_t> key_b;  // (log d) t Poly2s in NTT form, level-major then digit
};

struct HintlessResponse {
  std::uint32_t params_id = 0;
  std::uint32_t outputs = 0;
  std::vector<std::uint32_t> a;  // outputs x d, < q_a
  std::vector<std::uint32_t> b;  // outputs x d, < 2^20
};

// What a client needs to query a database (PirInfo.info): the params id and the shape.
//   info := u32 magic "HPI1" | u32 params id | u64 records | u64 record bytes | u32 outputs
//           | u64 records per column | u64 columns
struct HintlessPublicInfo {
  HintlessParams params;
  HintlessShape shape;
};
std::vector<std::uint8_t> encode_public_info(const HintlessParams& params,
                                             const HintlessShape& shape);
// kDataLoss for malformed bytes; kFailedPrecondition for an unknown params id (or an insecure
// one without `allow_insecure`); kInvalidArgument for a shape that does not fit its params.
Result<HintlessPublicInfo> decode_public_info(std::span<const std::uint8_t> bytes,
                                              bool allow_insecure = false);
// The checks a shape from the wire must pass before anything is sized from it.
Status check_shape(const HintlessParams& params, const HintlessShape& shape);

std::size_t hintless_query_bytes(const HintlessParams& params, std::size_t columns);
std::size_t hintless_response_bytes(const HintlessParams& params, std::size_t outputs);

std::vector<std::uint8_t> encode_query(const HintlessParams& params, const HintlessQuery& query);
// kDataLoss for a wrong magic, length or residue; kFailedPrecondition for another params id or
// column count than the database's ("the client's PirInfo is stale").
Result<HintlessQuery> decode_query(const HintlessParams& params, const HintlessShape& shape,
                                   std::span<const std::uint8_t> bytes);

std::vector<std::uint8_t> encode_response(const HintlessParams& params,
                                          const HintlessResponse& response);
Result<HintlessResponse> decode_response(const HintlessParams& params, const HintlessShape& shape,
                                         std::span<const std::uint8_t> bytes);
// A shard's part of a response: `outputs` consecutive outputs (kDataLoss otherwise).
Result<HintlessResponse> decode_response_part(const HintlessParams& params, std::size_t outputs,
                                              std::span<const std::uint8_t> bytes);
// One query's parts from shards holding consecutive output ranges, in order, joined into the
// response one server would send (byte-identical). kDataLoss when a part does not decode or the
// outputs do not add up to the shape's.
Result<std::vector<std::uint8_t>> join_response_parts(
    const HintlessParams& params, const HintlessShape& shape,
    std::span<const std::span<const std::uint8_t>> parts);

}  // namespace privsearch::pir::hintless
