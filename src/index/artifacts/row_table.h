// The header the per-row tables of an index generation share (record_digests.h, doc_ids.h): a
// 4-byte magic, u16 version 1, u16 0, u64 rows, u64 first (the row the table starts at: an
// update generation's rows follow the earlier ones).
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "core/bytes.h"
#include "core/status.h"

namespace privsearch::index {

struct RowTableHeader {
  std::uint64_t rows = 0, first = 0;
};
inline constexpr std::size_t kRowTableHeaderBytes = 4 + 2 + 2 + 8 + 8;

inline void put_row_table_header(ByteWriter& w, const std::uint8_t (&magic)[4], std::uint64_t rows,
                                 std::uint64_t first) {
  w.put_bytes(magic);
  w.put_u16(1);
  w.put_u16(0);
  w.put_u64(rows);
  w.put_u64(first);
}

// The header at the start of `r`, which is left after it: kDataLoss naming `what` for another
// magic, version or a short header. The caller checks `rows` against what follows.
inline Result<RowTableHeader> read_row_table_header(ByteReader& r, const std::uint8_t (&magic)[4],
                                                    std::string_view what) {
  std::uint8_t got[4] = {};
  std::uint16_t version = 0, zero = 0;
  RowTableHeader h;
  if (!r.get_bytes(got).ok() || std::memcmp(got, magic, 4) != 0) {
    return data_loss_error("not " + std::string(what));
  }
  if (!r.get_u16(version).ok() || !r.get_u16(zero).ok() || !r.get_u64(h.rows).ok() ||
      !r.get_u64(h.first).ok() || version != 1 || zero != 0) {
    return data_loss_error(std::string(what) + " of another version, or a short header");
  }
  return h;
}

}  // namespace privsearch::index
