#include "pir/zippir/zippir_shard.h"

#include <algorithm>
#include <string>

#include "core/bytes.h"

namespace privsearch::pir {
using namespace detail;

Status check_row_range(const ZipPirParams& params, const DatabaseShape& shape,
                       ZipPirRowRange range) {
  const std::size_t slots = params.slots_per_plaintext();
  const bool inside =
      range.rows > 0 && range.first_row < shape.rows && range.rows <= shape.rows - range.first_row;
  const std::size_t end = range.first_row + range.rows;
  if (!inside || slots == 0 || range.first_row % slots != 0 ||
      (end % slots != 0 && end != shape.rows)) {
    return invalid_argument_error("ZipPIR shard rows [" + std::to_string(range.first_row) + ", " +
                                  std::to_string(end) + ") are not whole packed rows of " +
                                  std::to_string(slots) + " inside the " +
                                  std::to_string(shape.rows) + " rows");
  }
  return Status();
}

Result<std::vector<ZipPirRowRange>> plan_row_shards(const ZipPirParams& params,
                                                    const DatabaseShape& shape,
                                                    std::size_t shards) {
  const std::size_t packed = params.packed_rows(shape), slots = params.slots_per_plaintext();
  if (shards == 0 || shards > packed) {
    return invalid_argument_error("ZipPIR: " + std::to_string(shards) + " shards for " +
                                  std::to_string(packed) + " packed rows (1 to that many)");
  }
  std::vector<ZipPirRowRange> out;
  std::size_t first_packed = 0;
  for (std::size_t s = 0; s < shards; ++s) {
    const std::size_t count = packed / shards + (s < packed % shards ? 1 : 0);
    const std::size_t first_row = first_packed * slots;
    const std::size_t rows = std::min(count * slots, shape.rows - first_row);
    out.push_back({first_row, rows});
    first_packed += count;
  }
  return out;
}

namespace {

// One shard's part: its header (query index, mode, packed-row range) checked and its items laid
// into `items` at their packed rows; kDataLoss for another query or mode than `query`'s (set by
// the first part), a range outside the packed rows, a wrong payload size or an overlap.
struct PartQuery {
  bool seen = false;
  std::uint64_t index = 0;
  std::uint8_t mode = 0;
};
Result<std::size_t> place_response_part(const ZipPirPublicInfo& info,
                                        std::span<const std::uint8_t> part, PartQuery& query,
                                        std::vector<std::span<const std::uint8_t>>& items) {
  const std::size_t packed = items.size();
  const std::size_t n_bytes = (static_cast<std::size_t>(info.params.paillier_bits) + 7) / 8;
  ByteReader r(part);
  PRIVSEARCH_RETURN_IF_ERROR(read_header(r, kResponsePartMagic, "ZipPIR response part"));
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(r, info.params_id(), "ZipPIR response part"));
  std::uint64_t part_index = 0;
  std::uint8_t part_mode = 0;
  std::uint32_t first = 0, count = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(part_index));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u8(part_mode));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(first));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(count));
  if (part_mode != kModeCombined && part_mode != kModeTOnly) {
    return data_loss_error("ZipPIR response part: unknown `mode` " + std::to_string(part_mode));
  }
  if (!query.seen) {
    query = {true, part_index, part_mode};
  } else if (part_index != query.index || part_mode != query.mode) {
    return data_loss_error("ZipPIR response parts answer different queries");
  }
  if (count == 0 || first >= packed || count > packed - first) {
    return data_loss_error("ZipPIR response part: packed rows [" + std::to_string(first) + ", " +
                           std::to_string(std::uint64_t{first} + count) + ") outside the " +
                           std::to_string(packed));
  }
  const std::size_t item = query.mode == kModeCombined ? 2 * n_bytes : n_bytes;
  if (r.remaining() != item * count) {
    return data_loss_error("ZipPIR response part: " + std::to_string(r.remaining()) +
                           " payload bytes, expected " + std::to_string(item * count));
  }
  const auto body = part.subspan(r.offset());
  for (std::size_t i = 0; i < count; ++i) {
    auto& slot = items[first + i];
    if (!slot.empty()) {
      return data_loss_error("ZipPIR response parts overlap at packed row " +
                             std::to_string(first + i));
    }
    slot = body.subspan(i * item, item);
  }
  return std::size_t{count};
}

}  // namespace

Result<std::vector<std::uint8_t>> assemble_zippir_response(
    const ZipPirPublicInfo& info, std::span<const std::vector<std::uint8_t>> parts) {
  const std::size_t packed = info.params.packed_rows(info.shape);
  std::vector<std::span<const std::uint8_t>> items(packed);
  PartQuery query;
  std::size_t covered = 0;
  for (const auto& part : parts) {
    PRIVSEARCH_ASSIGN_OR_RETURN(const std::size_t placed,
                                place_response_part(info, part, query, items));
    covered += placed;
  }
  if (covered != packed) {
    const auto missing =
        std::find_if(items.begin(), items.end(), [](const auto& s) { return s.empty(); });
    return unavailable_error("ZipPIR: " + std::to_string(packed - covered) + " of " +
                             std::to_string(packed) + " packed rows missing from the shards' " +
                             "answers (first: " + std::to_string(missing - items.begin()) + ")");
  }
  ByteWriter w;
  put_header(w, kResponseMagic);
  w.put_u64(info.params_id());
  w.put_u64(query.index);
  w.put_u8(query.mode);
  w.put_u32(static_cast<std::uint32_t>(packed));
  for (const auto& item : items) w.put_bytes(item);
  return w.take();
}

}  // namespace privsearch::pir
