#include "protocol/ivf_list_pir.h"

#include <fmt/format.h>

#include <cstring>

#include "index/candidates/ivf_list_record.h"
#include "pir/lwe/database.h"

namespace privsearch::protocol {

Result<IvfListPirTable> ivf_list_pir_table(const index::IvfListStore& store) {
  const index::IvfIndex& ivf = store.index();
  IvfListPirTable t;
  t.records = ivf.lists;
  t.record_bytes = index::list_record_bytes(ivf);
  if (t.record_bytes > pir::kMaxRecordBytes ||
      t.records * t.record_bytes > pir::kMaxDatabaseBytes) {
    return resource_exhausted_error(fmt::format(
        "the IVF lists as PIR records: {} lists x {} bytes (the longest list) exceed the PIR "
        "database limits ({} MiB records, {} GiB in all)",
        t.records, t.record_bytes, pir::kMaxRecordBytes >> 20, pir::kMaxDatabaseBytes >> 30));
  }
  t.bytes.assign(t.records * t.record_bytes, 0);
  for (std::uint32_t l = 0; l < ivf.lists; ++l) {
    std::size_t at = std::size_t{l} * t.record_bytes;
    for (std::uint32_t g = 0; g <= ivf.deltas.size(); ++g) {
      if (ivf.ref(l, g).bytes == 0) continue;
      PRIVSEARCH_ASSIGN_OR_RETURN(const std::string segment, store.segment(l, g));
      std::memcpy(t.bytes.data() + at, segment.data(), segment.size());
      at += segment.size();
    }
  }
  return t;
}

}  // namespace privsearch::protocol
