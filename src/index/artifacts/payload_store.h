// The payload store: documents (title + text) in fixed-size records, ready for PIR (every
// record has the same size, so a PIR database is a plain matrix of records).
//
// Format: 64-byte header — magic "PSPL", u16 version 1, u16 0, u64 records, u32 record_bytes,
// then `records` records of `record_bytes` bytes: u32 length, then UTF-8 "title\n\ntext"
// (cut to fit, ending with the marker kTruncatedMarker when cut), zero padding. The length's top
// bit (kCutFlag) says the document was cut, so a reader tells a cut document from one that ends
// in the marker's text; records of stores written before the flag never have it set.
// Thread safety: an open store is immutable.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "index/artifacts/manifest.h"
#include "index/encoders/beir.h"

namespace privsearch::index {

inline constexpr std::string_view kTruncatedMarker = " [...]";
inline constexpr std::uint32_t kCutFlag = 0x80000000u;

// A decoded record: the body, and whether the document was longer than its record and cut.
struct DecodedPayload {
  std::string text;
  bool cut = false;
};

// The PIR database shape the signed manifest implies for the payloads: every generation's
// payload file is a 64-byte header and documents x record_bytes, so record_bytes is the files'
// record bytes over the manifest's documents (each listed file's size is hashed and signed).
// A client checks the provider's PirInfo against it (client/payload_fetcher.h), so a provider
// cannot serve a database of another shape (other records or record sizes). kNotFound when the
// manifest lists no payloads; kDataLoss when the sizes do not divide.
struct PayloadShape {
  std::uint64_t records = 0, record_bytes = 0;
};
Result<PayloadShape> payload_shape(const Manifest& manifest);

// A document's record body: "title\n\ntext" (the text alone without a title).
std::string payload_body(const Document& d);

// How documents fit records of `record_bytes`: how many are cut, and the largest record a
// document needs whole (its body + the 4-byte length).
struct RecordFit {
  std::size_t cut = 0;
  std::size_t largest_record = 0;
};
RecordFit record_fit(const std::vector<Document>& docs, std::size_t record_bytes);
// The record size chosen from the data (`--record-bytes auto`): the smallest multiple of 64 that
// holds every document whole, within [64, 1 MiB] (a larger document is still cut).
std::size_t record_bytes_for(const std::vector<Document>& docs);

class PayloadStore {
 public:
  // record_bytes in [64, 1 MiB].
  static Status write(const std::filesystem::path& file, const std::vector<Document>& docs,
                      std::size_t record_bytes);
  // The same from a generator of the `count` documents (builds that never hold them all).
  static Status write(const std::filesystem::path& file, std::size_t count,
                      const std::function<Document(std::size_t)>& document,
                      std::size_t record_bytes);
  static Result<PayloadStore> open(const std::filesystem::path& file);

  // Update generations (index/artifacts/append.h): `more`'s records after these (same record size),
  // and record i zeroed (a deleted document: a fetch of it decodes to empty text).
  Status append(const PayloadStore& more);
  void erase(std::size_t i);

  std::size_t records() const { return records_; }
  std::size_t record_bytes() const { return record_bytes_; }
  // The raw fixed-size record i (what PIR serves).
  const std::uint8_t* record(std::size_t i) const { return data_.data() + i * record_bytes_; }
  // Decoded "title\n\ntext" of record i (kOutOfRange / kDataLoss on a bad index or record).
  Result<std::string> text(std::size_t i) const;
  // Record i's title (its first line); empty when the record cannot be read.
  std::string title(std::size_t i) const;
  // Decodes a raw record (as a client does after a PIR fetch).
  static Result<std::string> decode_record(const std::uint8_t* record, std::size_t record_bytes);
  // The same, with the record's cut flag.
  static Result<DecodedPayload> decode_payload(const std::uint8_t* record,
                                               std::size_t record_bytes);

 private:
  std::size_t records_ = 0, record_bytes_ = 0;
  std::vector<std::uint8_t> data_;
};

}  // namespace privsearch::index
