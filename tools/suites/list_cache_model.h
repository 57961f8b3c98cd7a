// What the IVF benchmarks (bench ivf, bench scale) share: the bytes a client with an LRU list
// cache of a given size fetches per search (the model of client::IvfListSource's memory and disk
// caches by list), and a file's size.
#pragma once

#include <cstdint>
#include <filesystem>
#include <list>
#include <unordered_map>
#include <vector>

#include "index/candidates/ivf.h"

namespace privsearch::tools {

class ListCacheModel {
 public:
  explicit ListCacheModel(std::uint64_t capacity) : capacity_(capacity) {}
  // Bytes fetched for `probed` (the lists not cached), which then become the most recent.
  std::uint64_t fetch(const index::IvfIndex& ivf, const std::vector<std::uint32_t>& probed) {
    std::uint64_t fetched = 0;
    for (const auto l : probed) {
      if (const auto it = where_.find(l); it != where_.end()) {
        order_.splice(order_.begin(), order_, it->second);
        continue;
      }
      fetched += ivf.directory[l].bytes;
      order_.push_front(l);
      where_[l] = order_.begin();
      held_ += ivf.directory[l].bytes;
      while (held_ > capacity_ && order_.size() > 1) {
        held_ -= ivf.directory[order_.back()].bytes;
        where_.erase(order_.back());
        order_.pop_back();
      }
    }
    return fetched;
  }

 private:
  std::uint64_t capacity_, held_ = 0;
  std::list<std::uint32_t> order_;
  std::unordered_map<std::uint32_t, std::list<std::uint32_t>::iterator> where_;
};

// 0 when the file is missing.
inline std::uint64_t file_bytes(const std::filesystem::path& p) {
  std::error_code ec;
  const auto n = std::filesystem::file_size(p, ec);
  return ec ? 0 : n;
}

}  // namespace privsearch::tools
