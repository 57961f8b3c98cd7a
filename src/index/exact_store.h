// The exact store: the provider's private float32 matrix X = (d - mu) V of projected document
// vectors, N x d', in one file the provider memory-maps read-only.
//
// Format: 64-byte header — magic "PSXS", u16 version 1, u16 0, u64 rows, u32 cols, u32 0,
// 40 bytes zero — then rows * cols float32 little-endian values (layout (rows, cols)).
// open() checks magic, version, shape against the file size (before mapping) and refuses
// non-finite values; gather() copies requested rows with bounds checks.
// Thread safety: an open store is immutable; gather() may run concurrently. Move-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include "core/status.h"
#include "index/vectors_io.h"

namespace privsearch::index {

class ExactStore {
 public:
  // Writes `m` atomically (temporary file + rename).
  static Status write(const std::filesystem::path& file, const Matrix& m);
  // Maps the file read-only (O_RDONLY, PROT_READ).
  static Result<ExactStore> open(const std::filesystem::path& file);

  ExactStore(ExactStore&& o) noexcept;
  ExactStore& operator=(ExactStore&& o) noexcept;
  ExactStore(const ExactStore&) = delete;
  ExactStore& operator=(const ExactStore&) = delete;
  ~ExactStore();

  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  const float* row(std::size_t r) const { return data_ + r * cols_; }
  // Whether the kernel reports the mapping without write permission (/proc/self/maps: the line
  // that starts at the mapping's address has no 'w'); false when that cannot be read. The
  // provider reports it in ServerInfo; open() maps PROT_READ from an O_RDONLY descriptor.
  bool read_only() const;

  // out = rows ids[0], ids[1], ... (K x cols). kOutOfRange naming the first bad id.
  Status gather(std::span<const std::uint64_t> ids, std::vector<float>& out) const;

 private:
  ExactStore() = default;
  void* map_ = nullptr;
  std::size_t map_bytes_ = 0;
  const float* data_ = nullptr;
  std::size_t rows_ = 0, cols_ = 0;
};

}  // namespace privsearch::index
