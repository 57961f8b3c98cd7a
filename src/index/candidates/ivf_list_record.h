// The IVF lists as PIR records ("fetching lists through the existing ZipPIR path, lists
// as records"): record l is list l's segments of every generation concatenated in generation
// order (its base segment, then its additions of each update that has one; index/candidates/ivf.h),
// and zero bytes after them up to the longest list's total rounded up to 4 KiB. No framing: a
// client knows each segment's size and SHA-256 from its signed directories, so it cuts the record
// itself and checks every part (decode_list). All records have one size, so the record a client
// fetches says nothing about which list it is; the padding is the price (at 1M documents the
// longest of 4,000 lists is ~3x the mean). Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"
#include "index/candidates/ivf.h"

namespace privsearch::index {

// Record sizes are whole multiples of this. An update that grows the longest list by less than
// the slack keeps the size, so the PIR database keeps its shape and the provider updates its
// hint over the changed lists' columns only (PirService::rebuild -> ZipPirServer::update), and
// registered clients keep their setup. Costs at most 4 KiB of padding per list (~6% at 64 KiB).
inline constexpr std::uint64_t kListRecordAlign = 4096;

// List `list`'s segment bytes over every generation (the record's used part).
std::uint64_t list_record_used_bytes(const IvfIndex& index, std::uint32_t list);
// The record size: the largest list_record_used_bytes over the lists, rounded up to a multiple
// of kListRecordAlign.
std::uint64_t list_record_bytes(const IvfIndex& index);

// One segment of a record: its bytes (inside the record) and the decoded list.
struct ListRecordPart {
  std::span<const std::uint8_t> bytes;
  IvfList list;
};

// The segments of list `list` from its record (`record` at least its used bytes; the padding
// after them must be zero): the base's, then each generation's that has one, each decoded.
// kDataLoss naming the list when a part is not the segment its directory names, or the padding
// is not zero (a record of another index or list); kOutOfRange for a list outside the index.
Result<std::vector<ListRecordPart>> split_list_record(const IvfIndex& index, std::uint32_t list,
                                                      std::span<const std::uint8_t> record);

}  // namespace privsearch::index
