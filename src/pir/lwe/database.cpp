#include "pir/lwe/database.h"

#include <cmath>
#include <string>

#include "core/bytes.h"
#include "core/csprng.h"

namespace privsearch::pir {

Result<DatabaseShape> choose_database_shape(std::size_t records, std::size_t record_bytes,
                                            std::size_t target_rows) {
  if (records == 0) return invalid_argument_error("PIR database needs at least one record");
  if (record_bytes == 0 || record_bytes > kMaxRecordBytes) {
    return out_of_range_error("PIR `record_bytes` = " + std::to_string(record_bytes) +
                              " is outside [1, " + std::to_string(kMaxRecordBytes) + "]");
  }
  std::size_t total = 0;
  if (!checked_mul(records, record_bytes, total) || total > kMaxDatabaseBytes) {
    return resource_exhausted_error("PIR database of " + std::to_string(records) + " x " +
                                    std::to_string(record_bytes) + " bytes exceeds the " +
                                    std::to_string(kMaxDatabaseBytes >> 30) + " GiB limit");
  }
  if (target_rows == 0) {
    const double scale = std::sqrt(static_cast<double>(total) / static_cast<double>(1ull << 30));
    target_rows = static_cast<std::size_t>(std::max(1.0, 15360.0 * scale));
  }
  DatabaseShape s;
  s.records = records;
  s.record_bytes = record_bytes;
  s.records_per_column = std::max<std::size_t>(
      1, static_cast<std::size_t>(
             std::llround(static_cast<double>(target_rows) / static_cast<double>(record_bytes))));
  s.records_per_column = std::min(s.records_per_column, records);
  s.rows = s.records_per_column * record_bytes;
  s.columns = (records + s.records_per_column - 1) / s.records_per_column;
  s.stride = (s.columns + 63) / 64 * 64;
  PRIVSEARCH_RETURN_IF_ERROR(validate_database_shape(s));
  return s;
}

Result<DatabaseShape> grown_database_shape(const DatabaseShape& previous, std::size_t records) {
  if (records < previous.records) {
    return invalid_argument_error("PIR database of " + std::to_string(records) +
                                  " records cannot grow from " + std::to_string(previous.records));
  }
  DatabaseShape s = previous;
  s.records = records;
  s.columns = (records + s.records_per_column - 1) / s.records_per_column;
  s.stride = (s.columns + 63) / 64 * 64;
  if (s.rows * s.stride > kMaxDatabaseBytes) {
    return resource_exhausted_error("PIR database grown past the " +
                                    std::to_string(kMaxDatabaseBytes >> 30) + " GiB limit");
  }
  PRIVSEARCH_RETURN_IF_ERROR(validate_database_shape(s));
  return s;
}

Status validate_database_shape(const DatabaseShape& s) {
  if (s.records == 0 || s.record_bytes == 0 || s.record_bytes > kMaxRecordBytes ||
      s.records_per_column == 0) {
    return invalid_argument_error("PIR database shape has a zero or oversized dimension");
  }
  std::size_t rows = 0, cells = 0;
  if (!checked_mul(s.records_per_column, s.record_bytes, rows) || rows != s.rows) {
    return invalid_argument_error("PIR shape: `rows` != records_per_column x record_bytes");
  }
  if (s.columns != (s.records + s.records_per_column - 1) / s.records_per_column) {
    return invalid_argument_error("PIR shape: `columns` does not hold `records`");
  }
  if (s.stride != (s.columns + 63) / 64 * 64) {
    return invalid_argument_error("PIR shape: `stride` is not columns rounded up to 64");
  }
  if (!checked_mul(s.rows, s.stride, cells) ||
      cells > kMaxDatabaseBytes + (kMaxDatabaseBytes >> 2)) {
    return resource_exhausted_error("PIR shape exceeds the database size limit");
  }
  return Status();
}

Result<LweDatabase> LweDatabase::create(const DatabaseShape& shape) {
  PRIVSEARCH_RETURN_IF_ERROR(validate_database_shape(shape));
  LweDatabase db;
  db.shape_ = shape;
  db.matrix_.assign(shape.rows * shape.stride, 0);
  return db;
}

Status LweDatabase::set_record(std::size_t index, std::span<const std::uint8_t> bytes) {
  if (index >= shape_.records) {
    return out_of_range_error("PIR record `index` = " + std::to_string(index) +
                              " >= " + std::to_string(shape_.records) + " records");
  }
  if (bytes.size() > shape_.record_bytes) {
    return out_of_range_error(
        "PIR record of " + std::to_string(bytes.size()) +
        " bytes exceeds `record_bytes` = " + std::to_string(shape_.record_bytes));
  }
  const std::size_t col = shape_.column_of(index);
  const std::size_t row0 = shape_.first_row_of(index);
  for (std::size_t k = 0; k < shape_.record_bytes; ++k) {
    matrix_[(row0 + k) * shape_.stride + col] = k < bytes.size() ? bytes[k] : 0;
  }
  return Status();
}

Status LweDatabase::set_records(std::span<const std::uint8_t> records) {
  const std::size_t rb = shape_.record_bytes, per = shape_.records_per_column;
  if (records.size() % rb != 0 || records.size() / rb > shape_.records) {
    return invalid_argument_error("PIR records: " + std::to_string(records.size()) +
                                  " bytes are not a whole number of at most " +
                                  std::to_string(shape_.records) + " records of " +
                                  std::to_string(rb) + " bytes");
  }
  const std::size_t count = records.size() / rb;
  constexpr std::size_t kBlock = 64;
  for (std::size_t c0 = 0; c0 < shape_.columns; c0 += kBlock) {
    const std::size_t c1 = std::min(shape_.columns, c0 + kBlock);
    for (std::size_t r = 0; r < shape_.rows; ++r) {
      const std::size_t k = r / rb, j = r % rb;  // record k of each column, its byte j
      std::uint8_t* out = matrix_.data() + r * shape_.stride;
      for (std::size_t c = c0; c < c1; ++c) {
        const std::size_t index = c * per + k;
        out[c] = index < count ? records[index * rb + j] : 0;
      }
    }
  }
  return Status();
}

std::vector<std::uint8_t> LweDatabase::record(std::size_t index) const {
  std::vector<std::uint8_t> out(shape_.record_bytes);
  const std::size_t col = shape_.column_of(index);
  const std::size_t row0 = shape_.first_row_of(index);
  for (std::size_t k = 0; k < shape_.record_bytes; ++k) {
    out[k] = matrix_[(row0 + k) * shape_.stride + col];
  }
  return out;
}

Result<std::vector<std::uint8_t>> LweDatabase::copy_rows(std::size_t first_row,
                                                         std::size_t rows) const {
  if (first_row > shape_.rows || rows > shape_.rows - first_row) {
    return out_of_range_error("PIR rows [" + std::to_string(first_row) + ", " +
                              std::to_string(first_row + rows) + ") outside the " +
                              std::to_string(shape_.rows) + " rows");
  }
  const auto begin = matrix_.begin() + static_cast<std::ptrdiff_t>(first_row * shape_.stride);
  return std::vector<std::uint8_t>(begin,
                                   begin + static_cast<std::ptrdiff_t>(rows * shape_.stride));
}

void LweDatabase::fill_pseudorandom(std::uint64_t seed) {
  Seed s{};
  for (int i = 0; i < 8; ++i)
    s[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(seed >> (8 * i));
  Prng prng = Prng::from_seed(s, 0x5049520000000000ull);
  for (std::size_t r = 0; r < shape_.rows; ++r) {
    std::uint8_t* row = matrix_.data() + r * shape_.stride;
    prng.fill(std::span(row, shape_.columns));
  }
  // Cells past the last record of the last column stay zero, as set_record leaves them.
  const std::size_t used_in_last =
      shape_.records - (shape_.columns - 1) * shape_.records_per_column;
  for (std::size_t r = used_in_last * shape_.record_bytes; r < shape_.rows; ++r) {
    matrix_[r * shape_.stride + shape_.columns - 1] = 0;
  }
}

}  // namespace privsearch::pir
