// Deletions of an updated index (index/artifacts/append.h): generation g's tombstones.g.bin lists
// the document ids deleted by that update — "PSTB", u16 1, u16 0, u32 generation, u32 0, u64 count,
// then count u32 ids ascending. Ids are never reused: a deleted row stays in its store (older
// versions a provider still serves answer for it), and the version that deleted it never returns,
// scores or serves it.
// Thread safety: free functions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include "core/status.h"
#include "index/artifacts/manifest.h"

namespace privsearch::index {

inline constexpr char kTombstonesArtifact[] = "tombstones";

// The file's bytes for generation g (`ids` ascending, no repeats).
std::vector<std::uint8_t> encode_tombstones(std::uint32_t generation,
                                            std::span<const std::uint32_t> ids);
// One file's ids, checked: format, generation, ids ascending and below `documents` (kDataLoss).
Result<std::vector<std::uint32_t>> parse_tombstones(std::span<const std::uint8_t> bytes,
                                                    std::uint32_t generation,
                                                    std::uint64_t documents,
                                                    const std::filesystem::path& file);
// Every id deleted in the manifest's generations, ascending.
Result<std::vector<std::uint32_t>> load_tombstones(const std::filesystem::path& dir,
                                                   const Manifest& manifest);

}  // namespace privsearch::index
