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

// A file a long build writes by appending across runs (it resumes after an interruption): the
// bytes go to `<path>.partial`; open() keeps the first `keep_bytes` of an existing one (what the
// caller's checkpoint recorded as durable; kDataLoss when it is shorter) and cuts the rest;
// sync() makes everything appended durable (call it before writing a checkpoint); finish()
// syncs and renames the file over `path`. Never visible under `path` while incomplete. Move-only.
class ResumableFile {
 public:
  static Result<ResumableFile> open(const std::filesystem::path& path, std::uint64_t keep_bytes);
  ResumableFile(ResumableFile&& o) noexcept;
  ResumableFile& operator=(ResumableFile&& o) noexcept;
  ResumableFile(const ResumableFile&) = delete;
  ResumableFile& operator=(const ResumableFile&) = delete;
  ~ResumableFile();

  Status append(std::span<const std::uint8_t> bytes);
  Status sync();
  Status finish();
  std::uint64_t size() const { return size_; }
  static std::filesystem::path partial_path(const std::filesystem::path& path);

 private:
  ResumableFile() = default;
  std::filesystem::path path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

// An exclusive flock() on `<file>.lock` (created, mode 0600), released when destroyed: what
// serializes processes that update one file or directory. acquire() waits for the lock;
// try_acquire() refuses at once (kFailedPrecondition naming the lock) when another holds it.
// Move-only.
class FileLock {
 public:
  static Result<FileLock> acquire(const std::filesystem::path& file);
  static Result<FileLock> try_acquire(const std::filesystem::path& file);
  FileLock(FileLock&& o) noexcept;
  FileLock& operator=(FileLock&&) = delete;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

 private:
  FileLock() = default;
  static Result<FileLock> lock(const std::filesystem::path& file, bool wait);
  int fd_ = -1;
};

}  // namespace privsearch::index
