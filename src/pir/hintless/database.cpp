#include "pir/hintless/database.h"

#include <algorithm>
#include <string>

namespace privsearch::pir::hintless {

Result<HintlessShape> choose_hintless_shape(const HintlessParams& params, std::size_t records,
                                            std::size_t record_bytes, std::size_t max_outputs) {
  if (records == 0 || record_bytes == 0) {
    return invalid_argument_error("hintless PIR needs at least one record of at least one byte");
  }
  const std::size_t per_output = params.column_bytes_per_output();
  const std::size_t min_outputs = (record_bytes + per_output - 1) / per_output;
  if (min_outputs > max_outputs) {
    return resource_exhausted_error("a record of " + std::to_string(record_bytes) +
                                    " bytes needs " + std::to_string(min_outputs) +
                                    " packed outputs, above the cap of " +
                                    std::to_string(max_outputs));
  }
  // The smallest rho whose query vector fits the budget (server work and memory grow with rho);
  // failing that, the rho with the fewest query + response bytes.
  HintlessShape best;
  std::size_t best_cost = 0;
  for (std::size_t rho = min_outputs; rho <= std::min(max_outputs, min_outputs + 32); ++rho) {
    HintlessShape s;
    s.records = records;
    s.record_bytes = record_bytes;
    s.outputs = rho;
    s.records_per_column = rho * per_output / record_bytes;
    s.columns = (records + s.records_per_column - 1) / s.records_per_column;
    if (s.columns > kMaxColumns) continue;
    if (hintless_decoding_failure_log2(params, s.columns, rho) > kMaxDecodingFailureLog2) continue;
    if (7 * s.columns <= kQueryVectorBudget) return s;
    const std::size_t cost = 7 * s.columns + params.output_bytes() * rho;
    if (best.outputs == 0 || cost < best_cost) {
      best = s;
      best_cost = cost;
    }
  }
  if (best.outputs == 0) {
    return resource_exhausted_error("no hintless PIR shape fits " + std::to_string(records) +
                                    " records of " + std::to_string(record_bytes) +
                                    " bytes (column or noise limit)");
  }
  return best;
}

void bytes_to_entries(std::span<const std::uint8_t> bytes, int p_bits,
                      std::span<std::uint16_t> entries) {
  const std::uint32_t mask = (std::uint32_t{1} << p_bits) - 1;
  for (std::size_t r = 0; r < entries.size(); ++r) {
    const std::size_t bit = r * static_cast<std::size_t>(p_bits);
    std::uint32_t window = 0;  // the three bytes holding bits [bit, bit + p_bits)
    for (std::size_t b = 0; b < 3; ++b) {
      const std::size_t at = bit / 8 + b;
      if (at < bytes.size()) window |= static_cast<std::uint32_t>(bytes[at]) << (8 * b);
    }
    entries[r] = static_cast<std::uint16_t>((window >> (bit % 8)) & mask);
  }
}

void entries_to_bytes(std::span<const std::uint16_t> entries, int p_bits,
                      std::span<std::uint8_t> bytes) {
  std::fill(bytes.begin(), bytes.end(), std::uint8_t{0});
  for (std::size_t r = 0; r < entries.size(); ++r) {
    const std::size_t bit = r * static_cast<std::size_t>(p_bits);
    const std::uint32_t window = static_cast<std::uint32_t>(entries[r]) << (bit % 8);
    for (std::size_t b = 0; b < 3; ++b) {
      const std::size_t at = bit / 8 + b;
      if (at < bytes.size()) bytes[at] |= static_cast<std::uint8_t>(window >> (8 * b));
    }
  }
}

HintlessDatabase::HintlessDatabase(const HintlessParams& params, const HintlessShape& shape,
                                   OutputRange range)
    : params_(params),
      shape_(shape),
      first_output_(range.first),
      outputs_(range.count != 0 ? range.count : shape.outputs - range.first),
      rows_(outputs_ * params.d),
      entries_(rows_ * shape.columns, 0) {}

HintlessDatabase HintlessDatabase::widened(const HintlessDatabase& old,
                                           const HintlessShape& shape) {
  HintlessDatabase db(old.params_, shape, OutputRange{old.first_output_, old.outputs_});
  for (std::size_t r = 0; r < old.rows_; ++r) {
    std::copy(old.entries_.begin() + static_cast<std::ptrdiff_t>(r * old.columns()),
              old.entries_.begin() + static_cast<std::ptrdiff_t>((r + 1) * old.columns()),
              db.entries_.begin() + static_cast<std::ptrdiff_t>(r * db.columns()));
  }
  return db;
}

Status HintlessDatabase::assemble_column(std::size_t column, const RecordSource& record,
                                         std::vector<std::uint8_t>& bytes) const {
  const std::size_t k = shape_.records_per_column;
  bytes.assign(shape_.column_bytes(params_), 0);
  for (std::size_t i = column * k; i < std::min(shape_.records, (column + 1) * k); ++i) {
    const std::span<const std::uint8_t> r = record(i);
    if (r.size() > shape_.record_bytes) {
      return out_of_range_error("record " + std::to_string(i) + " has " + std::to_string(r.size()) +
                                " bytes, above the slot of " + std::to_string(shape_.record_bytes));
    }
    std::copy(r.begin(), r.end(), bytes.begin() + shape_.offset_of(i));
  }
  return Status();
}

Status HintlessDatabase::fill(const RecordSource& record) {
  std::vector<std::uint8_t> col;
  for (std::size_t c = 0; c < columns(); ++c) {
    PRIVSEARCH_RETURN_IF_ERROR(assemble_column(c, record, col));
    write_column(c, col);
  }
  return Status();
}

Status HintlessDatabase::rewrite_column(std::size_t column, const RecordSource& record) {
  if (column >= columns()) {
    return out_of_range_error("column " + std::to_string(column) + " is past the " +
                              std::to_string(columns()) + " columns of the database");
  }
  std::vector<std::uint8_t> col;
  PRIVSEARCH_RETURN_IF_ERROR(assemble_column(column, record, col));
  write_column(column, col);
  return Status();
}

bool HintlessDatabase::column_differs(std::size_t column, const RecordSource& record) const {
  std::vector<std::uint8_t> col;
  if (!assemble_column(column, record, col).ok()) return true;
  std::vector<std::uint16_t> e(shape_.rows(params_));
  bytes_to_entries(col, params_.p_bits, e);
  for (std::size_t r = 0; r < rows_; ++r) {
    if (entries_[r * columns() + column] != e[first_row() + r]) return true;
  }
  return false;
}

void HintlessDatabase::write_column(std::size_t column, std::span<const std::uint8_t> bytes) {
  // The whole column's entries, then the held rows' (a shard skips the others).
  std::vector<std::uint16_t> e(shape_.rows(params_));
  bytes_to_entries(bytes, params_.p_bits, e);
  for (std::size_t r = 0; r < rows_; ++r) entries_[r * columns() + column] = e[first_row() + r];
}

}  // namespace privsearch::pir::hintless
