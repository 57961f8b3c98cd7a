// The client's on-disk cache of IVF list segments (index/candidates/ivf.h), content-addressed: a
// segment is kept as <dir>/<sha256 hex>.seg, so a list unchanged between index versions is fetched
// once, and a name says what its bytes must hash to. Bounded in bytes; the least recently used
// segments are evicted first (recency survives restarts as the files' modification times).
// Files are written atomically (index/artifacts/atomic_file.h). The cache does not trust its own
// files: get() returns bytes only when they hash to their name, and removes a file that does not.
// Thread safety: one SegmentCache per thread; processes sharing a directory are safe (same
// name, same content; a segment evicted under a reader is a miss).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/sha256.h"
#include "core/status.h"

namespace privsearch::client {

class SegmentCache {
 public:
  // Creates `dir` (owner-only) when missing and indexes the segments already there; files of
  // other names are left alone. kInvalidArgument for max_bytes 0.
  static Result<SegmentCache> open(const std::filesystem::path& dir, std::uint64_t max_bytes);

  // The segment hashing to `sha256`, when cached and intact.
  std::optional<std::string> get(const Sha256Digest& sha256);
  // Stores `bytes` (which must hash to `sha256`: checked) and evicts least recently used
  // segments until the cache is within its bound (a segment larger than the bound is not kept).
  Status put(const Sha256Digest& sha256, std::string_view bytes);

  std::uint64_t bytes() const { return bytes_; }
  std::size_t entries() const { return entries_.size(); }

 private:
  struct Entry {
    std::uint64_t bytes = 0;
    std::uint64_t used = 0;  // recency tick (larger: more recent)
  };
  SegmentCache(std::filesystem::path dir, std::uint64_t max_bytes)
      : dir_(std::move(dir)), max_bytes_(max_bytes) {}
  std::filesystem::path file_of(const std::string& hex) const { return dir_ / (hex + ".seg"); }
  void drop(const std::string& hex);
  void evict_to(std::uint64_t limit, const std::string& keep);

  std::filesystem::path dir_;
  std::uint64_t max_bytes_ = 0;
  std::uint64_t bytes_ = 0;
  std::uint64_t tick_ = 0;
  std::map<std::string, Entry> entries_;  // by hex SHA-256
};

}  // namespace privsearch::client
