#include "client/segment_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/bytes.h"
#include "index/artifacts/atomic_file.h"

namespace privsearch::client {
namespace fs = std::filesystem;

namespace {

bool is_segment_name(const fs::path& p) {
  const auto stem = p.stem().string();
  return p.extension() == ".seg" && stem.size() == 64 &&
         std::all_of(stem.begin(), stem.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

}  // namespace

Result<SegmentCache> SegmentCache::open(const fs::path& dir, std::uint64_t max_bytes) {
  if (max_bytes == 0) return invalid_argument_error("a list cache of 0 bytes");
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec)
      return unavailable_error(
          fmt::format("cannot create the list cache `{}`: {}", dir.string(), ec.message()));
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  }
  if (!fs::is_directory(dir, ec)) {
    return invalid_argument_error(
        fmt::format("the list cache `{}` is not a directory", dir.string()));
  }
  SegmentCache cache(dir, max_bytes);
  // Existing segments, oldest first, so their recency order is kept.
  std::vector<std::pair<fs::file_time_type, fs::directory_entry>> found;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file(ec) && is_segment_name(e.path()))
      found.emplace_back(e.last_write_time(ec), e);
  }
  if (ec)
    return unavailable_error(
        fmt::format("cannot read the list cache `{}`: {}", dir.string(), ec.message()));
  std::sort(found.begin(), found.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [time, e] : found) {
    const auto size = e.file_size(ec);
    if (ec) continue;
    cache.entries_[e.path().stem().string()] = {size, ++cache.tick_};
    cache.bytes_ += size;
  }
  cache.evict_to(max_bytes, "");
  return cache;
}

std::optional<std::string> SegmentCache::get(const Sha256Digest& sha256) {
  const auto hex = to_hex(sha256);
  const auto it = entries_.find(hex);
  if (it == entries_.end()) return std::nullopt;
  auto bytes = index::read_file_bytes(file_of(hex));
  if (!bytes.ok() || privsearch::sha256(*bytes) != sha256) {
    drop(hex);  // evicted by another process, or damaged: a miss either way
    return std::nullopt;
  }
  it->second.used = ++tick_;
  std::error_code ec;
  fs::last_write_time(file_of(hex), fs::file_time_type::clock::now(), ec);
  return to_byte_string(*bytes);
}

Status SegmentCache::put(const Sha256Digest& sha256, std::string_view bytes) {
  if (privsearch::sha256(byte_view(bytes)) != sha256) {
    return invalid_argument_error("segment bytes do not hash to their cache name");
  }
  if (bytes.size() > max_bytes_) return Status();
  const auto hex = to_hex(sha256);
  if (entries_.count(hex) == 0) {
    PRIVSEARCH_RETURN_IF_ERROR(index::write_bytes_atomically(file_of(hex), byte_view(bytes)));
    entries_[hex] = {bytes.size(), 0};
    bytes_ += bytes.size();
  }
  entries_[hex].used = ++tick_;
  evict_to(max_bytes_, hex);
  return Status();
}

void SegmentCache::drop(const std::string& hex) {
  const auto it = entries_.find(hex);
  if (it == entries_.end()) return;
  std::error_code ec;
  fs::remove(file_of(hex), ec);
  bytes_ -= it->second.bytes;
  entries_.erase(it);
}

void SegmentCache::evict_to(std::uint64_t limit, const std::string& keep) {
  while (bytes_ > limit) {
    auto victim = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first != keep &&
          (victim == entries_.end() || it->second.used < victim->second.used)) {
        victim = it;
      }
    }
    if (victim == entries_.end()) return;
    drop(victim->first);
  }
}

}  // namespace privsearch::client
