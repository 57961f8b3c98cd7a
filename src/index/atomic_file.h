// Atomic file writes: data goes to `<path>.tmp-<random>` in the same directory, is flushed and
// fsync'ed, then renamed over `path`; on any failure the temporary file is removed, so a crash
// or an error never leaves a partial artifact under the final name.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace privsearch::index {

// `write` receives a FILE* opened for binary writing and returns its status.
Status write_file_atomically(const std::filesystem::path& path,
                             const std::function<Status(std::FILE*)>& write);
Status write_bytes_atomically(const std::filesystem::path& path,
                              std::span<const std::uint8_t> bytes);
// The whole file (kNotFound naming it when it cannot be opened).
Result<std::vector<std::uint8_t>> read_file_bytes(const std::filesystem::path& path);

}  // namespace privsearch::index
