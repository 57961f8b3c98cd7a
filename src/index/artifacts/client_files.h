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

// The file `file` (a bare name) of index `dir` when a client may download it: manifest.json,
// manifest.sig, or the file of an artifact the manifest lists under one of `public_names` (or
// an update generation "name.g" of one). kNotFound for anything else, whatever the directory
// holds; kDataLoss when the manifest cannot be read. What the provider's browser endpoint
// serves under /index/ (server/web_gateway.h).
Result<std::filesystem::path> public_index_file(const std::filesystem::path& dir,
                                                const std::string& file,
                                                const std::vector<std::string>& public_names);

}  // namespace privsearch::index
