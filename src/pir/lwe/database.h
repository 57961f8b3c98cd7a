// The PIR database as a d1 x d0 matrix over Z_p, p = 2^8: one byte per entry, row-major with the
// row stride padded to 64 bytes for the kernels.
//
// Records of any size are stacked vertically: column c holds records c * per_column ...
// (c + 1) * per_column - 1, record k of a column in rows [k R, (k + 1) R) (R = record_bytes).
// A query selects one column and the answer carries all d1 rows of it, so a record never spans
// two columns and the client reads its rows out of the one decrypted column (as in SimplePIR and
// HintlessPIR with long records).
// Shape: the rows target d1 ~ 15,360 sqrt(size / 1 GiB) (the ZipPIR paper's 1 GB shape, scaled
// like its 2 GB one), rounded to whole records; at least one record per column.
// Thread safety: immutable after filling; readers may share it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"

namespace privsearch::pir {

inline constexpr std::size_t kMaxDatabaseBytes = std::size_t{64} << 30;  // 64 GiB
inline constexpr std::size_t kMaxRecordBytes = std::size_t{1} << 24;     // 16 MiB

struct DatabaseShape {
  std::size_t records = 0;
  std::size_t record_bytes = 0;
  std::size_t records_per_column = 0;
  std::size_t rows = 0;     // d1
  std::size_t columns = 0;  // d0
  std::size_t stride = 0;   // bytes per stored row (columns rounded up to 64)

  std::size_t column_of(std::size_t record) const { return record / records_per_column; }
  std::size_t first_row_of(std::size_t record) const {
    return (record % records_per_column) * record_bytes;
  }
  std::size_t matrix_bytes() const { return rows * columns; }
};

// `target_rows` = 0 picks the default above. Checks sizes against the limits.
Result<DatabaseShape> choose_database_shape(std::size_t records, std::size_t record_bytes,
                                            std::size_t target_rows = 0);
// `previous` grown (or kept) to `records` records: the same rows, records per column and record
// size, the columns as many as the records need (an update that appends; rows fixed so that
// the hint H = D A can be updated column by column: ZipPirServer::update). kInvalidArgument for
// fewer records than before.
Result<DatabaseShape> grown_database_shape(const DatabaseShape& previous, std::size_t records);
// Re-validates a shape read from the wire or a file.
Status validate_database_shape(const DatabaseShape& shape);

class LweDatabase {
 public:
  static Result<LweDatabase> create(const DatabaseShape& shape);

  const DatabaseShape& shape() const { return shape_; }
  // Writes record `index` (at most record_bytes; the rest of its rows stay zero).
  Status set_record(std::size_t index, std::span<const std::uint8_t> bytes);
  // Records 0 .. count - 1 at once from `records` (count x record_bytes, contiguous), in blocks
  // of 64 columns row by row: what set_record does for each, without its column-strided writes
  // (a 640 MB database of 64-byte records: seconds instead of tens). kInvalidArgument unless the
  // size is a whole number of records, at most shape().records.
  Status set_records(std::span<const std::uint8_t> records);
  std::vector<std::uint8_t> record(std::size_t index) const;
  // Fills every record from a deterministic byte stream (benchmarks and tests).
  void fill_pseudorandom(std::uint64_t seed);

  const std::uint8_t* data() const { return matrix_.data(); }
  // Rows [first_row, first_row + rows) (rows x stride bytes): a shard's part of the matrix
  // (pir/zippir/zippir_shard.h). kOutOfRange outside the matrix.
  Result<std::vector<std::uint8_t>> copy_rows(std::size_t first_row, std::size_t rows) const;
  // The whole matrix, moved out (the database is empty afterwards).
  std::vector<std::uint8_t> release_matrix() && { return std::move(matrix_); }
  std::uint8_t* mutable_data() { return matrix_.data(); }

 private:
  LweDatabase() = default;
  DatabaseShape shape_;
  std::vector<std::uint8_t> matrix_;
};

}  // namespace privsearch::pir
