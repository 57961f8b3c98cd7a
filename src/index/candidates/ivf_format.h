// The byte layout shared by the IVF writers, the directory parser and the list decoder
// (docs/PROTOCOL.md "IVF lists"): internal to src/index, not part of the module's API.
#pragma once

#include <cstddef>

#include "index/candidates/ivf.h"

namespace privsearch::index::ivf_format {

inline constexpr std::size_t kMaxLists = 1u << 22;
// A directory entry: offset u64, bytes u64, count u32, SHA-256 of the segment.
inline constexpr std::size_t kDirectoryEntryBytes = 8 + 8 + 4 + 32;
inline constexpr char kSegmentMagic[4] = {'P', 'S', 'L', 'S'};

// PQ codes of `count` documents blocked by 64 (index/candidates/pq_scan.h's layout), padded up.
inline std::size_t blocked_bytes(std::size_t count, std::size_t m) {
  return ((count + 63) / 64) * m * 64;
}

inline std::size_t segment_bytes(std::size_t count, std::size_t m) {
  return kListSegmentHeaderBytes + count * 4 + blocked_bytes(count, m);
}

}  // namespace privsearch::index::ivf_format
