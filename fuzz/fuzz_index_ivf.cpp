// Fuzz target: the IVF index files a client decodes (index/candidates/ivf.h). The first byte picks
// the decoder, the rest is the input: 0 ivf.bin (the directory a client downloads), 1 a list
// segment (what FetchLists returns), decoded against a directory forged to name exactly these
// bytes, so the segment parser runs past the hash check on every input; 2 an update's delta
// directory (ivf_delta.g.bin) added to a forged base of 300 documents in 3 lists (spill 2, d' = 4,
// M = 2: the corpus index's shape); 3 an update's tombstones (index/artifacts/tombstones.h); 4 a
// list's PIR record (index/candidates/ivf_list_record.h, what a private list fetch decrypts): u16
// L, then the record, whose first L bytes a forged directory names as the list's one segment.
// Property for 4: an accepted record is one segment equal to its first L bytes, zeros after.
// Properties for 2 and 3: an accepted delta is the base's next generation with contiguous
// segments holding each appended document `spill` times; accepted tombstones are ascending ids
// inside the collection.
// Properties: no crash; an accepted directory has contiguous segments holding N documents and
// routes any query to at most `lists` lists; an accepted segment has ascending ids inside the
// collection and codes of its declared size, and scanning it returns only its ids.
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/bytes.h"
#include "core/check.h"
#include "core/sha256.h"
#include "index/artifacts/tombstones.h"
#include "index/candidates/ivf.h"
#include "index/candidates/ivf_list_record.h"

namespace {

// A directory of one list over 1000 documents, M = 2, d' = 4, whose entry names `segment`.
privsearch::index::IvfIndex forged_directory(std::span<const std::uint8_t> segment) {
  privsearch::index::IvfIndex ivf;
  ivf.documents = 1000;
  ivf.lists = 1;
  ivf.route_dim = 4;
  ivf.codebook = privsearch::index::shaped_codebook(4, 2);
  std::fill(ivf.codebook.centroids.begin(), ivf.codebook.centroids.end(), 0.25f);
  ivf.centroids.assign(4, 1.0f);
  privsearch::index::IvfListRef ref;
  ref.offset = privsearch::index::kListsFileHeaderBytes;
  ref.bytes = segment.size();
  std::uint32_t count = 0;
  if (segment.size() >= 16) std::memcpy(&count, segment.data() + 12, 4);  // little-endian hosts
  ref.count = count;
  ref.sha256 = privsearch::sha256(segment);
  ivf.directory = {ref};
  return ivf;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace privsearch;
  if (size == 0) return 0;
  const std::span<const std::uint8_t> body(data + 1, size - 1);
  if (data[0] % 5 == 4) {
    if (body.size() < 2) return 0;
    const std::size_t named =
        std::min<std::size_t>(body[0] | (std::size_t{body[1]} << 8), body.size() - 2);
    const auto record = body.subspan(2);
    const auto ivf = forged_directory(record.first(named));
    const auto parts = index::split_list_record(ivf, 0, record);
    if (!parts.ok()) return 0;
    PRIVSEARCH_CHECK(
        parts->size() == 1 && parts->front().bytes.size() == named &&
            std::equal(parts->front().bytes.begin(), parts->front().bytes.end(), record.begin()),
        "accepted a record whose part is not the named segment");
    PRIVSEARCH_CHECK(std::all_of(record.begin() + static_cast<std::ptrdiff_t>(named), record.end(),
                                 [](std::uint8_t b) { return b == 0; }),
                     "accepted a record with non-zero padding");
    return 0;
  }
  if (data[0] % 5 == 2) {
    index::IvfIndex base;
    base.documents = 300;
    base.lists = 3;
    base.spill = 2;
    base.route_dim = 4;
    base.codebook = index::shaped_codebook(4, 2);
    base.centroids.assign(12, 0.5f);
    base.directory.resize(3);
    if (!index::add_ivf_delta(base, body, "fuzz input").ok()) return 0;
    const auto& d = base.deltas.at(0);
    PRIVSEARCH_CHECK(d.first_document == 300 && d.documents >= 300 && d.directory.size() == 3,
                     "accepted a delta that is not the next generation");
    std::uint64_t entries = 0, next = index::kListsFileHeaderBytes;
    for (const auto& ref : d.directory) {
      if (ref.bytes == 0) continue;
      PRIVSEARCH_CHECK(ref.offset == next, "accepted a delta with a gap");
      next += ref.bytes;
      entries += ref.count;
    }
    PRIVSEARCH_CHECK(entries == (d.documents - 300) * 2 && next == d.lists_file_bytes,
                     "accepted a delta whose lists do not add up");
    return 0;
  }
  if (data[0] % 5 == 3) {
    const auto ids = index::parse_tombstones(body, 1, 5000, "fuzz input");
    if (!ids.ok()) return 0;
    for (std::size_t i = 0; i < ids->size(); ++i) {
      PRIVSEARCH_CHECK((*ids)[i] < 5000 && (i == 0 || (*ids)[i] > (*ids)[i - 1]),
                       "accepted tombstones out of order or range");
    }
    return 0;
  }
  if (data[0] % 5 == 0) {
    const auto ivf = index::parse_ivf(body, "fuzz input");
    if (!ivf.ok()) return 0;
    std::uint64_t docs = 0, next = index::kListsFileHeaderBytes;
    for (const auto& ref : ivf->directory) {
      PRIVSEARCH_CHECK(ref.offset == next, "accepted directory with a gap");
      next += ref.bytes;
      docs += ref.count;
    }
    PRIVSEARCH_CHECK(docs == ivf->documents && next == ivf->lists_file_bytes,
                     "accepted directory whose lists do not add up");
    const std::vector<float> query(ivf->codebook.dim, 0.5f);
    PRIVSEARCH_CHECK(
        index::route_query(*ivf, query, 3).size() == std::min<std::size_t>(3, ivf->lists),
        "routing returned the wrong number of lists");
    return 0;
  }
  const auto ivf = forged_directory(body);
  const auto list = index::decode_list(ivf, 0, body);
  if (!list.ok()) return 0;
  PRIVSEARCH_CHECK(
      list->ids.size() == list->count && list->blocked.size() == ((list->count + 63) / 64) * 2 * 64,
      "accepted segment of the wrong size");
  for (std::size_t i = 0; i < list->count; ++i) {
    PRIVSEARCH_CHECK(list->ids[i] < 1000 && (i == 0 || list->ids[i] > list->ids[i - 1]),
                     "accepted segment with ids out of order or range");
  }
  const index::IvfList* lists[] = {&*list};
  const std::vector<float> query{0.1f, -0.2f, 0.3f, 0.4f};
  const auto top = index::ivf_search(ivf, lists, query, 10);
  PRIVSEARCH_CHECK(top.ok(), "scan of an accepted segment failed");
  for (const auto id : *top) {
    PRIVSEARCH_CHECK(std::binary_search(list->ids.begin(), list->ids.end(), id),
                     "the scan returned a document outside the list");
  }
  return 0;
}
