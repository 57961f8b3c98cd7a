// The exact store: the provider's private float32 matrix X = (d - mu) V of projected document
// vectors, N x d', in one file the provider memory-maps read-only.
//
// Format: 64-byte header — magic "PSXS", u16 version 1, u16 0, u64 rows, u32 cols, u32 value
// type (0 float32, 1 float16), 40 bytes zero — then rows * cols values, little-endian, layout
// (rows, cols). float16 halves the provider's disk and page cache (the rerank's
// precision loss is measured in docs/SCALE.md); gather() widens the rows it reads.
// open() checks magic, version, shape against the file size (before mapping), refuses
// non-finite values, and records a 64-bit hash of every row. gather() — what the provider serves
// from — reads the requested rows with pread() from the descriptor opened at load (never through
// the mapping, so a file truncated while serving cannot raise SIGBUS) and checks each against its
// recorded hash: a row changed in place or cut off since the load is kDataLoss, never a wrong
// score. (The hash is a fast non-cryptographic mix: it catches accidental or careless changes of
// the file; an attacker who can write the provider's disk is outside the threat model.)
// row() reads the mapping directly, for offline users (evaluation, audits) only; a float16
// store widens all of itself into memory on the first call (the provider never calls it).
// Thread safety: an open store is immutable; gather() may run concurrently. Move-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "core/status.h"
#include "index/vectors_io.h"

namespace privsearch::index {

enum class StoreDtype : std::uint32_t { kFloat32 = 0, kFloat16 = 1 };

class ExactStore {
 public:
  // Writes `m` atomically (temporary file + rename); kInvalidArgument when float16 is asked
  // for and a value does not fit it.
  static Status write(const std::filesystem::path& file, const Matrix& m,
                      StoreDtype dtype = StoreDtype::kFloat32);
  // The pieces of the file, for builds that write it a block of rows at a time
  // (index/build_streaming.h): the 64-byte header of a rows x cols store, and the bytes of a
  // block of rows (`first_row` names rows in errors; float16 refuses values it cannot hold).
  static std::vector<std::uint8_t> encode_header(std::uint64_t rows, std::size_t cols,
                                                 StoreDtype dtype);
  static Result<std::vector<std::uint8_t>> encode_rows(const Matrix& block, StoreDtype dtype,
                                                       std::uint64_t first_row);
  // Maps the file read-only (O_RDONLY, PROT_READ).
  static Result<ExactStore> open(const std::filesystem::path& file);

  ExactStore(ExactStore&& o) noexcept;
  ExactStore& operator=(ExactStore&& o) noexcept;
  ExactStore(const ExactStore&) = delete;
  ExactStore& operator=(const ExactStore&) = delete;
  ~ExactStore();

  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  StoreDtype dtype() const { return dtype_; }
  const float* row(std::size_t r) const;
  // The largest row norm, computed at open() (the provider's score bound).
  double max_row_norm() const { return max_row_norm_; }
  // Whether the kernel reports the mapping without write permission (/proc/self/maps: the line
  // that starts at the mapping's address has no 'w'); false when that cannot be read. The
  // provider reports it in ServerInfo; open() maps PROT_READ from an O_RDONLY descriptor.
  bool read_only() const;

  // out = rows ids[0], ids[1], ... (K x cols), each as verified at open(). kOutOfRange naming
  // the first bad id; kDataLoss when a row is shorter than, or differs from, what was loaded.
  Status gather(std::span<const std::uint64_t> ids, std::vector<float>& out) const;

 private:
  ExactStore() = default;
  void decode_row(const std::uint8_t* raw, float* out) const;
  // One pass at open(): every value finite (kDataLoss naming `file`, the row and column), each
  // row's hash and the largest row norm.
  Status index_rows(const std::filesystem::path& file);
  // A float16 store's rows widened to float32, made once on the first row() call.
  struct Widened {
    std::once_flag once;
    std::vector<float> values;
  };
  void* map_ = nullptr;
  std::size_t map_bytes_ = 0;
  const std::uint8_t* values_ = nullptr;
  StoreDtype dtype_ = StoreDtype::kFloat32;
  std::size_t rows_ = 0, cols_ = 0;
  double max_row_norm_ = 0;
  int fd_ = -1;                          // kept open for gather()'s pread
  std::vector<std::uint64_t> row_hash_;  // per row, at open()
  std::unique_ptr<Widened> widened_ = std::make_unique<Widened>();
};

}  // namespace privsearch::index
