// The PIR database of the IVF lists (provider `--pir-lists`; docs/SECURITY.md, "IVF lists"):
// one record per list, laid out as index/candidates/ivf_list_record.h says, read from the
// provider's list store (every segment checked as segment() checks it). A client then fetches the
// lists it probes by PIR (client/ivf_lists.h with a list fetcher) and the provider no longer
// learns which lists a search probed, only how many were fetched. Thread safety: pure function.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "index/candidates/ivf.h"
#include "protocol/pir_service.h"

namespace privsearch::protocol {

struct IvfListPirTable {
  std::size_t records = 0, record_bytes = 0;
  std::vector<std::uint8_t> bytes;  // records x record_bytes
  PirRecords view() const { return {records, record_bytes, bytes.data()}; }
};

// kResourceExhausted when the table would exceed pir::kMaxDatabaseBytes (lists x the longest
// list: the padding that hides which list is fetched).
Result<IvfListPirTable> ivf_list_pir_table(const index::IvfListStore& store);

}  // namespace privsearch::protocol
