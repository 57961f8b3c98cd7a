// The record matrix of the hintless backend and the shape rule that lays records out in it.
//
// Orientation as in pir/lwe/database.h: a query selects one column c*, and the answer carries
// the whole column. A column is a byte string of rho * d * p_bits / 8 bytes (rho packed outputs,
// 3,584 bytes each at d = 2048, p = 2^14) read as rho * d entries of p_bits bits, entry r being
// bits [r p_bits, (r + 1) p_bits) of the string, LSB first. A column holds k =
// floor(column bytes / R) records of R bytes; record i sits in column i / k at byte (i % k) R.
// Shape rule: rho >= ceil(R / 3,584) so that a record fits one column; then the smallest rho
// whose query vector (7 d0 bytes) fits kQueryVectorBudget, because the server's packing work and
// memory (~96 MiB of precomputation per output at d = 2048) grow with rho; if none does within
// the caller's cap, the rho with the fewest query + response bytes, 7 d0 + 12,288 rho. Every
// candidate meets the noise bound. The packing key (473,088 B) is the same for every shape, so
// the query stays under 800 KB.
// Thread safety: HintlessDatabase is not synchronised; the server writes it only while no query
// runs (create, update under its own lock).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/status.h"
#include "pir/hintless/params.h"

namespace privsearch::pir::hintless {

struct HintlessShape {
  std::size_t records = 0;
  std::size_t record_bytes = 0;        // R: every record's slot, shorter records zero-padded
  std::size_t outputs = 0;             // rho: packed ciphertexts per answer
  std::size_t records_per_column = 0;  // k
  std::size_t columns = 0;             // d0
  std::size_t rows(const HintlessParams& p) const { return outputs * p.d; }
  std::size_t column_bytes(const HintlessParams& p) const {
    return outputs * p.column_bytes_per_output();
  }
  std::size_t column_of(std::size_t record) const { return record / records_per_column; }
  std::size_t offset_of(std::size_t record) const {
    return (record % records_per_column) * record_bytes;
  }
};

// The largest column count the lazy 64-bit accumulation of the answer allows:
// d0 (2^14 - 1) (2^28 - 1) < 2^64.
inline constexpr std::size_t kMaxColumns = std::size_t{1} << 22;
inline constexpr std::size_t kDefaultMaxOutputs = 32;
inline constexpr std::size_t kQueryVectorBudget = std::size_t{256} << 10;

// kInvalidArgument for zero records or bytes; kResourceExhausted when a record needs more than
// `max_outputs` outputs or the database more than kMaxColumns columns or the noise bound fails.
Result<HintlessShape> choose_hintless_shape(const HintlessParams& params, std::size_t records,
                                            std::size_t record_bytes,
                                            std::size_t max_outputs = kDefaultMaxOutputs);

// Entry r of `bytes` read as p_bits-bit values (zero past the end), and back.
void bytes_to_entries(std::span<const std::uint8_t> bytes, int p_bits,
                      std::span<std::uint16_t> entries);
void entries_to_bytes(std::span<const std::uint16_t> entries, int p_bits,
                      std::span<std::uint8_t> bytes);

// Which packed outputs a server holds: all of them, or a shard's contiguous range (each output
// is d rows of D, so a shard holds only its rows: the database splits by output blocks).
struct OutputRange {
  std::size_t first = 0;
  std::size_t count = 0;  // 0: every output from `first` on
  static OutputRange all() { return {}; }
};

class HintlessDatabase {
 public:
  using RecordSource = std::function<std::span<const std::uint8_t>(std::size_t)>;

  // Precondition: `range` lies within shape.outputs (HintlessServer::create checks).
  HintlessDatabase(const HintlessParams& params, const HintlessShape& shape,
                   OutputRange range = OutputRange::all());

  // `old`'s held rows widened to `shape` (more columns, the same outputs and layout: an append);
  // the new columns are zero until written. Precondition: HintlessServer::grown checks.
  static HintlessDatabase widened(const HintlessDatabase& old, const HintlessShape& shape);

  const HintlessShape& shape() const { return shape_; }
  std::size_t first_output() const { return first_output_; }
  std::size_t outputs() const { return outputs_; }
  std::size_t first_row() const { return first_output_ * params_.d; }
  std::size_t rows() const { return rows_; }  // held rows
  std::size_t columns() const { return shape_.columns; }
  // Row-major rows() x columns() entries.
  std::span<const std::uint16_t> entries() const { return entries_; }
  // Row r of D (absolute: first_row() <= r < first_row() + rows()).
  const std::uint16_t* row(std::size_t r) const {
    return entries_.data() + (r - first_row()) * columns();
  }

  // Every record at once, column by column (each column assembled and written once): record(i)
  // gives record i's bytes. kOutOfRange for a record longer than R.
  Status fill(const RecordSource& record);
  // Column c again from its records (an update). kOutOfRange as fill, or for c past the shape.
  Status rewrite_column(std::size_t column, const RecordSource& record);
  // Whether `record` gives column c other held entries than it holds now (kOutOfRange-sized
  // records count as different: rewrite_column then reports them).
  bool column_differs(std::size_t column, const RecordSource& record) const;

 private:
  Status assemble_column(std::size_t column, const RecordSource& record,
                         std::vector<std::uint8_t>& bytes) const;
  void write_column(std::size_t column, std::span<const std::uint8_t> bytes);
  HintlessParams params_;
  HintlessShape shape_;
  std::size_t first_output_ = 0, outputs_ = 0, rows_ = 0;
  std::vector<std::uint16_t> entries_;
};

}  // namespace privsearch::pir::hintless
