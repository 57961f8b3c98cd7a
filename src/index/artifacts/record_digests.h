// Record digests: what lets a client verify every record it reads by PIR (issue 52). A PIR
// answer is decoded into whatever record the provider's database holds, so a provider could
// serve a changed document and the client would show it. This public artifact holds, for every
// record i of the payload PIR database, the first 16 bytes of
//   SHA-256("privsearch payload record v1\n" || u64 i (little-endian) || the whole record)
// and is hashed in the signed manifest like every artifact, so a record is bound to its index
// and to the signed version. The client downloads it with the other public files (16 bytes a
// document: 83 KB for SciFact's 5,183, 16 MB at 1M beside ~84 MB of PQ codes) and checks each
// fetched record after decoding: nothing is added to a fetch's bytes, and the check is one
// SHA-256 of the record. 128 bits: finding another record with the same digest is a second
// preimage of truncated SHA-256. A record that fails is kDataLoss; the caller sends nothing
// else because of it (no retry), so whether a record failed changes no later request.
//
// Format: "PSRD", u16 version 1, u16 0, u64 records, u64 first (the index of the first record:
// an update generation's records follow the earlier ones), then records x 16 bytes.
// Thread safety: an open table is immutable.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include "core/status.h"
#include "index/artifacts/payload_store.h"

namespace privsearch::index {

inline constexpr char kPayloadDigestsArtifact[] = "payload_digests";
inline constexpr std::size_t kRecordDigestBytes = 16;
using RecordDigest = std::array<std::uint8_t, kRecordDigestBytes>;

RecordDigest record_digest(std::uint64_t index, std::span<const std::uint8_t> record);

class RecordDigests {
 public:
  // The digests of `store`'s records, numbered from `first` (a generation's first document).
  static Status write(const std::filesystem::path& file, const PayloadStore& store,
                      std::uint64_t first);
  static Result<RecordDigests> open(const std::filesystem::path& file);

  // An update generation's table after this one (its first record must be records()).
  Status append(const RecordDigests& more);
  // Record i deleted (PayloadStore::erase zeroes it): its digest becomes the zero record's.
  void erase(std::uint64_t i, std::size_t record_bytes);
  std::uint64_t records() const { return digests_.size(); }

  // kOk when `record` is record `index` of the signed version; kDataLoss otherwise (kOutOfRange
  // for an index past the table).
  Status check(std::uint64_t index, std::span<const std::uint8_t> record) const;

 private:
  std::uint64_t first_ = 0;
  std::vector<RecordDigest> digests_;
};

}  // namespace privsearch::index
