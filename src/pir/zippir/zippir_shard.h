// ZipPIR over row shards: the database D (d1 x d0) split by rows across S servers, and
// the pieces a coordinator needs to return the bytes one server would.
//
// Why rows, not columns: every part of the answer is row-local. Row i of the answer is
// D[i] . qu, row i of the hint H = D A is D[i] A, the rescaled exponents E[i] = round((H[i] +
// M[i]) / 2^(32-b)) use the mask row M[i], and a packed row (slots consecutive rows) yields one
// response ciphertext c_i = k_i (1 + t_i N) with k_i and t_i from those rows alone. A shard that
// holds whole packed rows therefore computes exactly the single server's c_i for them; the
// coordinator only concatenates. A column split would need the shards' H parts summed before the
// rounding (round(a) + round(b) != round(a + b)), so it could not reproduce the single server's
// bytes without a round trip of unrounded hints; it would also have to add every LWE answer.
// Cost of rows: every shard receives the whole query (d0 entries + the n offsets, the same bytes
// to each) and scans d1/S x d0 bytes of D per answer: the same bandwidth per byte as one server.
// Records sit in one column across record_bytes rows, so a record usually lies in one shard, and
// the coordinator must still ask every shard: the rows a client reads are what PIR hides.
//
// Messages: a shard answers with a part — "ZPRP", version, params id, u64 query index, u8 mode,
// u32 first packed row, u32 count, then count items (Paillier ciphertexts, or Z_N values in the
// t-only mode) — and assemble_zippir_response() checks that the parts are of one query and mode
// and cover the packed rows exactly once, in any order, and writes the single-server response.
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"
#include "pir/lwe/database.h"
#include "pir/zippir/zippir_common.h"
#include "pir/zippir/zippir_params.h"

namespace privsearch::pir {

// Rows [first_row, first_row + rows) of the database.
struct ZipPirRowRange {
  std::size_t first_row = 0;
  std::size_t rows = 0;
  bool operator==(const ZipPirRowRange&) const = default;
};

// kInvalidArgument unless the range is inside the database, non-empty, starts on a packed row
// (a multiple of the slots per plaintext) and ends on one or at the last row.
Status check_row_range(const ZipPirParams& params, const DatabaseShape& shape,
                       ZipPirRowRange range);

// `shards` ranges of whole packed rows covering the database in order, their sizes differing by
// at most one packed row. kInvalidArgument for 0 shards or more shards than packed rows.
Result<std::vector<ZipPirRowRange>> plan_row_shards(const ZipPirParams& params,
                                                    const DatabaseShape& shape, std::size_t shards);

// The single server's response from every shard's part for one query. kDataLoss for a part that
// is malformed, of another database (params id), query index or mode, or whose rows overlap
// another's; kUnavailable when rows are missing (a shard did not answer): never a partial
// response.
Result<std::vector<std::uint8_t>> assemble_zippir_response(
    const ZipPirPublicInfo& info, std::span<const std::vector<std::uint8_t>> parts);

}  // namespace privsearch::pir
