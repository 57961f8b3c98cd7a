// The provider's rows of every generation of an index (index/artifacts/append.h) as one id space:
// the base exact store holds ids 0 .. N_0 - 1, generation g's store the ids appended by it. Deleted
// ids (the tombstones of every generation) are refused by name, so a document deleted in this
// version is never scored, while an older version that the provider still serves (with its own
// ExactRows) keeps answering for it.
// Stores are shared: opening a new version reuses the open stores of the previous one whose
// file and SHA-256 are the same (an update reopens, re-verifies and re-hashes only its new
// segments; the base store of 10M documents takes minutes to hash).
// Thread safety: immutable after open(); gather() may run concurrently.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "index/artifacts/exact_store.h"
#include "index/artifacts/manifest.h"

namespace privsearch::index {

class ExactRows {
 public:
  // The stores the manifest lists ("exact_store", "exact_store.g"); `previous`: a version
  // opened before, whose stores are reused when unchanged. kDataLoss when their rows do not add
  // up to the manifest's documents or their columns differ from d'.
  static Result<ExactRows> open(const std::filesystem::path& dir, const Manifest& manifest,
                                const std::vector<std::uint32_t>& deleted,
                                const ExactRows* previous = nullptr);

  // One store as the only generation, not owned (it must outlive the rows): tests and tools
  // that open a store themselves.
  static ExactRows of(const ExactStore& store);

  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  std::size_t segments() const { return stores_.size(); }
  std::size_t reused_segments() const { return reused_; }
  std::size_t deleted() const { return deleted_.size(); }
  double max_row_norm() const { return max_row_norm_; }
  bool read_only() const;
  // ExactStore::gather over all generations; kNotFound for a deleted id.
  Status gather(std::span<const std::uint64_t> ids, std::vector<float>& out) const;

 private:
  struct Segment {
    std::shared_ptr<const ExactStore> store;
    std::uint64_t first = 0;
    std::string key;  // file name and SHA-256: what makes a store reusable
  };
  std::vector<Segment> stores_;
  std::vector<std::uint32_t> deleted_;
  std::size_t rows_ = 0, cols_ = 0, reused_ = 0;
  double max_row_norm_ = 0;
};

}  // namespace privsearch::index
