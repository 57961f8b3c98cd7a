// Document ids: the collection's own `_id` of every row, so results, fetched records and deletes
// speak the user's ids, not row numbers (issue 53). A public artifact hashed in the signed
// manifest like the payloads: a client that holds it names every hit without asking anyone
// (an id never leaves the client in a request), and an update appends a generation's ids
// (doc_ids.g) after the earlier ones. Ids are unique among the live rows: a build refuses a
// repeated id, an update replaces the live row of an id it adds again (upsert).
//
// Cost: the id bytes plus 4 bytes a row. SciFact's 5,183 numeric ids take ~60 KB; 10M ids of
// ~12 bytes ~160 MB, which an IVF client at that scale does not download (its hits keep their row
// numbers until the lists carry ids).
//
// Format: "PSID", u16 version 1, u16 0, u64 rows, u64 first (the first row: a generation's
// rows follow the earlier ones), then per row u16 length and the id's bytes (1 .. 1024 bytes,
// UTF-8 as given, no control characters).
// Thread safety: an open table is immutable.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"

namespace privsearch::index {

inline constexpr char kDocIdsArtifact[] = "doc_ids";
inline constexpr std::size_t kMaxDocIdBytes = 1024;

// kInvalidArgument naming the id when it is empty, longer than kMaxDocIdBytes or holds a control
// character (which would break the text output and the id files).
Status check_doc_id(std::string_view id);

class DocIds {
 public:
  // Every id checked (check_doc_id); rows numbered from `first`.
  static Result<std::vector<std::uint8_t>> encode(std::span<const std::string> ids,
                                                  std::uint64_t first);
  static Status write(const std::filesystem::path& file, std::span<const std::string> ids,
                      std::uint64_t first);
  // kDataLoss for anything but the exact format above (every length and id checked).
  static Result<DocIds> decode(std::span<const std::uint8_t> bytes);
  static Result<DocIds> open(const std::filesystem::path& file);

  // An update generation's ids after these (its first row must be records()).
  Status append(const DocIds& more);
  std::uint64_t first() const { return first_; }
  std::uint64_t records() const { return first_ + ends_.size(); }
  // Row `row`'s id ("" for a row outside the table).
  std::string_view id(std::uint64_t row) const;
  // id -> row over the rows not in `deleted` (ascending); kDataLoss if two live rows share an id.
  Result<std::unordered_map<std::string_view, std::uint32_t>> live_rows(
      std::span<const std::uint32_t> deleted) const;

 private:
  std::uint64_t first_ = 0;
  std::string bytes_;                // every id, back to back
  std::vector<std::uint64_t> ends_;  // row first_ + i ends at ends_[i]
};

}  // namespace privsearch::index
