// The files a client needs from an index directory: the manifest (and its signature), then the
// named public artifacts, each verified against the manifest before it is copied and written
// atomically, so a client directory never holds a damaged or partial artifact.
// `privsearch client-files` chooses the names (flat: pq; IVF: ivf; payloads and the
// access-private hint on request); the private artifacts are never listed there.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/status.h"

namespace privsearch::index {

// Copies manifest.json, manifest.sig when present, and the artifacts `names` (those the manifest
// lists; a name it does not list is kNotFound) with their update generations' additions and
// tombstones (index/artifacts/append.h) from `index_dir` into `out` (created). Into a directory
// that holds an older version, only the artifacts it does not hold already are copied (a client's
// update download). Returns the bytes written.
Result<std::uint64_t> copy_client_files(const std::filesystem::path& index_dir,
                                        const std::filesystem::path& out,
                                        const std::vector<std::string>& names);

}  // namespace privsearch::index
