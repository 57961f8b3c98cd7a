#include "index/candidates/ivf_list_record.h"

#include <fmt/format.h>

#include <algorithm>

namespace privsearch::index {

std::uint64_t list_record_used_bytes(const IvfIndex& index, std::uint32_t list) {
  std::uint64_t bytes = 0;
  for (std::uint32_t g = 0; g <= index.deltas.size(); ++g) bytes += index.ref(list, g).bytes;
  return bytes;
}

std::uint64_t list_record_bytes(const IvfIndex& index) {
  std::uint64_t longest = 1;
  for (std::uint32_t l = 0; l < index.lists; ++l) {
    longest = std::max(longest, list_record_used_bytes(index, l));
  }
  return (longest + kListRecordAlign - 1) / kListRecordAlign * kListRecordAlign;
}

Result<std::vector<ListRecordPart>> split_list_record(const IvfIndex& index, std::uint32_t list,
                                                      std::span<const std::uint8_t> record) {
  if (list >= index.lists) {
    return out_of_range_error(fmt::format("list {} outside the index's {}", list, index.lists));
  }
  const std::uint64_t used = list_record_used_bytes(index, list);
  if (record.size() < used) {
    return data_loss_error(
        fmt::format("list {}'s record has {} bytes, its segments {}", list, record.size(), used));
  }
  if (!std::all_of(record.begin() + static_cast<std::ptrdiff_t>(used), record.end(),
                   [](std::uint8_t b) { return b == 0; })) {
    return data_loss_error(fmt::format(
        "list {}'s record is not zero after its segments: a record of another list or index",
        list));
  }
  std::vector<ListRecordPart> out;
  std::uint64_t at = 0;
  for (std::uint32_t g = 0; g <= index.deltas.size(); ++g) {
    const auto& ref = index.ref(list, g);
    if (g > 0 && ref.bytes == 0) continue;  // the list gained nothing in update g
    const auto bytes = record.subspan(at, ref.bytes);
    PRIVSEARCH_ASSIGN_OR_RETURN(auto decoded, decode_list(index, list, bytes, g));
    out.push_back({bytes, std::move(decoded)});
    at += ref.bytes;
  }
  return out;
}

}  // namespace privsearch::index
