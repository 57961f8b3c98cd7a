// The IVF-partitioned public index (the search paper's "optional IVF variant"): the
// client keeps only the coarse centroids, the PQ codebook and a directory of the lists, and
// fetches the posting lists it probes from the provider, instead of downloading and scanning all
// N codes.
//
// Coarse quantizer: spherical k-means (Faiss Clustering, seeded sample) on the first `route_dim`
// coordinates of the projected vectors. The SVD basis is nested (its prefixes are the leading
// principal directions), so a prefix routes nearly as well as the whole vector at a fraction of
// the centroid bytes. Centroids are stored as binary16 (the client's download; their rounding is
// what both sides route and assign with). Each document is in the `spill` lists l maximizing
// <x[:r], c_l> (1 by default); a query probes the `nprobe` lists with the largest <q[:r], c_l>
// (ties: smaller l). Lists hold the document ids and, by default, the codes of the flat artifact's
// PQ codebook, so an IVF search that probes every list returns exactly the flat scan's top K; a
// coarser PQ of their own (IvfOptions::pq_m) trades candidate precision for bytes per fetched
// document.
//
// Files (artifacts in the manifest):
//   ivf.bin ("PSIV", public, what a client downloads): documents, lists, d', r, M, spill, the PQ
//     codebook (float32), the centroids (lists x r binary16), then per list its segment's offset
//     and size in ivf_lists.bin, its document count and the SHA-256 of its segment bytes.
//   ivf_lists.bin ("PSIL", served by the provider list by list): the header, then one segment per
//     list, in list order and contiguous. A segment is self-describing: "PSLS", u16 1, u16 0, u32
//     list, u32 count, u32 M, u32 0, count u32 ids (ascending), then the codes in the scan's block
//     layout (index/candidates/pq_scan.h: ceil(count / 64) x M x 64 bytes, padding zero).
// A segment's SHA-256 is its content address: the client's cache keeps segments by it, checks
// every fetched or cached one against the directory (itself covered by the signed manifest), and
// keeps unchanged lists across index versions.
// Thread safety: value types and pure functions; IvfListStore is immutable after open().
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "core/sha256.h"
#include "core/status.h"
#include "index/artifacts/manifest.h"
#include "index/candidates/pq.h"
#include "index/candidates/pq_scan.h"
#include "index/vectors_io.h"

namespace privsearch::index {

inline constexpr char kIvfArtifact[] = "ivf";
inline constexpr char kIvfListsArtifact[] = "ivf_lists";
inline constexpr char kIvfFile[] = "ivf.bin";
inline constexpr char kIvfListsFile[] = "ivf_lists.bin";
inline constexpr char kIvfDeltaArtifact[] = "ivf_delta";  // generations >= 1 only
inline constexpr std::size_t kListSegmentHeaderBytes = 24;
inline constexpr std::size_t kListsFileHeaderBytes = 16;
// Below this many documents `privsearch build` makes only the flat artifact (its download, about
// 100 bytes per document at d' = 672, is small enough); at or above it, both.
inline constexpr std::uint64_t kIvfDefaultMinDocuments = 2'000'000;
// Route prefix r by default (capped at d'): at 1M documents r = 128 loses 0.015 Hit@10 against
// r = 672 at the same bytes, routes faster, and keeps ivf.bin (2r + 52 bytes per list) within
// 20 MB up to ~15M documents (docs/SCALE.md).
inline constexpr std::size_t kIvfDefaultRouteDim = 128;
// Lists per document at most (IvfOptions::spill), and by default (measured: two lists per
// document buy more quality per fetched byte than twice the probes).
inline constexpr std::size_t kMaxSpill = 8;
inline constexpr std::size_t kIvfDefaultSpill = 2;

struct IvfListRef {
  std::uint64_t offset = 0;  // in ivf_lists.bin
  std::uint64_t bytes = 0;   // the segment's size
  std::uint32_t count = 0;   // documents in the list
  Sha256Digest sha256{};     // of the segment's bytes
};

// The lists' additions of one update generation g >= 1 (index/artifacts/append.h): documents
// [first_document, documents) appended, each in its `spill` best lists under the unchanged
// centroids. Files (artifacts "ivf_lists.g" and "ivf_delta.g", see generation_artifact()):
//   ivf_lists.g.bin: the "PSIL" header, then one segment (same format as the base's) per list
//     that gained documents, in list order;
//   ivf_delta.g.bin ("PSID", what an updating client downloads): generation, lists, M, first
//     document, documents after it, lists file bytes, entries; then per entry the list, its
//     segment's offset, size, count and SHA-256.
// A list probed by a search is its base segment plus its delta segment of every generation.
struct IvfDelta {
  std::uint64_t first_document = 0;
  std::uint64_t documents = 0;  // the collection's size after this generation
  std::uint64_t lists_file_bytes = 0;
  std::vector<IvfListRef> directory;  // one per list; bytes 0: the list gained nothing
};

struct IvfIndex {
  std::uint64_t documents = 0;  // in the base lists (ids 0 .. documents - 1)
  std::size_t spill = 1;        // lists each document is in
  std::size_t lists = 0;
  std::size_t route_dim = 0;                   // r <= d'
  PqCodebook codebook;                         // d' = codebook.dim
  std::vector<float> centroids;                // lists x r (binary16 values widened)
  std::vector<std::uint16_t> centroid_halves;  // the same as stored: what route_query reads
  std::vector<IvfListRef> directory;           // one per list
  std::uint64_t lists_file_bytes = 0;
  std::vector<IvfDelta> deltas;  // generation g at g - 1

  // The collection's size with every generation applied.
  std::uint64_t total_documents() const {
    return deltas.empty() ? documents : deltas.back().documents;
  }
  // List `list`'s segment in `generation` (0: the base); bytes 0 when it has none there.
  const IvfListRef& ref(std::uint32_t list, std::uint32_t generation = 0) const {
    return generation == 0 ? directory[list] : deltas[generation - 1].directory[list];
  }
};

struct IvfOptions {
  std::size_t lists = 0;      // nlist; 0: default_ivf_lists(N)
  std::size_t route_dim = 0;  // r; 0: d'
  std::size_t train_size = 200000;
  std::uint64_t seed = 1;
  int iterations = 20;
  // Each document goes into its `spill` best lists (redundant assignment: a query near a list
  // boundary still finds it; list bytes grow by the same factor).
  std::size_t spill = kIvfDefaultSpill;
  // Subquantizers of the lists' codes; 0 (or the flat artifact's M): the flat artifact's codes,
  // else a PQ of their own (M bytes per document per fetch; trained on the same sample).
  std::size_t pq_m = 0;
};

// nlist for N documents: N / kIvfDocumentsPerList (at least 1 and at most N). Lists of a fixed
// size keep the bytes a probe fetches constant as N grows; measured at 1M (docs/SCALE.md): 4,000
// lists beat sqrt(N) = 1,000 at every byte budget.
inline constexpr std::uint64_t kIvfDocumentsPerList = 250;
std::size_t default_ivf_lists(std::uint64_t documents);

// The binary16 value nearest to v, widened back (round to nearest even; what the file keeps).
float round_to_half(float v);

// Trains the centroids on a seeded sample of `projected` (rows x d'), assigns every document,
// and writes ivf_lists.bin and ivf.bin into `dir` atomically (lists first). `pq` is the flat PQ
// artifact of the same rows (its codebook and codes are reused). Returns the two manifest entries.
Result<std::vector<ArtifactEntry>> build_ivf(const Matrix& projected, const PqArtifact& pq,
                                             const IvfOptions& options,
                                             const std::filesystem::path& dir);

// The phases of build_ivf, for builds that stream their rows (index/build_streaming.h).
// From this many lists on, the centroids come from a two-level k-means (sqrt(lists) coarse
// clusters, each split in proportion to its share of the sample): flat k-means costs `lists`
// inner products per sample point and iteration (40,000 lists at 10M documents: hours here).
inline constexpr std::size_t kTwoLevelMinLists = 8192;
// Centroids (lists x r, binary16-rounded) trained on the first r coordinates of `sample`'s rows.
Result<std::vector<float>> train_ivf_centroids(const Matrix& sample, std::size_t lists,
                                               std::size_t r, const IvfOptions& options);
// The `spill` best lists of every row (rows x spill, best first): <row[:r], c_l> largest, ties
// by the smaller l.
Result<std::vector<std::uint32_t>> assign_to_lists(const std::vector<float>& centroids,
                                                   std::size_t r, std::size_t spill,
                                                   const Matrix& rows);
// The balanced assignment of a base build (ivf_balance.cpp). Why: the lists are served by PIR
// as records of one size, the longest list's, so every fetch of a list costs the longest list's
// bytes (at 1M documents with spill 2: lists of 497 entries median, 701 at most, records 1.39x
// the mean segment). Every row keeps its best list (the one a query near it routes to first);
// its other spill - 1 copies are placed under a cap of entries per list: round k (k = 1 ..
// choices - 1) offers every row still short of copies its k-th best list, taken best inner
// product first (ties: the smaller row) while the list has room; a copy no choice has room for
// goes to the list with the most room that does not hold the row (no list ever exceeds the cap).
// The cap: the mean entries per list (rows x spill / lists) plus 2%, rounded up to a whole block
// of 64 (the lists' code blocks), and at least the most first choices of any list, rounded up.
// Measured at 1M (docs/FIGURES.md, the cold private-lists search): 512 entries per list, 93.5% of
// second copies in their second best list, 99.7% within the best 8, the lists' PIR records 73,728
// -> 53,248 bytes, and the recall of the exact top 10 within 32 probed lists unchanged (0.795 ->
// 0.798 over 200 queries).
inline constexpr std::size_t kListChoices = 8;
struct ListChoices {
  std::size_t rows = 0, choices = 0;
  std::vector<std::uint32_t> lists;  // rows x choices, best first (assign_to_lists' order)
  std::vector<float> scores;         // their inner products <row[:r], c_l>
};
// The `choices` best lists of every row with their scores (choices <= lists).
Result<ListChoices> list_choices(const std::vector<float>& centroids, std::size_t r,
                                 std::size_t choices, const Matrix& rows);
std::size_t balanced_list_cap(std::span<const std::uint32_t> first_choices, std::size_t lists,
                              std::size_t spill);
// rows x spill lists (the first the row's best), as write_ivf takes them. kInvalidArgument when
// spill exceeds the choices or the lists.
Result<std::vector<std::uint32_t>> balanced_assignment(const ListChoices& choices,
                                                       std::size_t lists, std::size_t spill);

// Writes ivf_lists.bin then ivf.bin into `dir` (atomically) from the centroids, the assignment
// of every document (codes.count x spill) and the lists' PQ codes.
Result<std::vector<ArtifactEntry>> write_ivf(const std::vector<float>& centroids, std::size_t r,
                                             std::size_t spill,
                                             std::span<const std::uint32_t> assignment,
                                             const PqArtifact& codes,
                                             const std::filesystem::path& dir);
// Generation `generation`'s additions to `base` (its lists and deltas so far): the documents
// [first_document, first_document + codes.count) with their list assignment (codes.count x
// spill, as assign_to_lists gives it) and PQ codes (the base codebook's). Writes
// ivf_lists.g.bin then ivf_delta.g.bin into `dir` atomically; returns their manifest entries.
Result<std::vector<ArtifactEntry>> write_ivf_delta(const IvfIndex& base, std::uint32_t generation,
                                                   std::span<const std::uint32_t> assignment,
                                                   const PqArtifact& codes,
                                                   const std::filesystem::path& dir);
// Parses ivf_delta.g.bin and adds it to `index` as its next generation: kDataLoss unless it is
// generation deltas.size() + 1 of this index (lists, M, first document = total so far) with
// contiguous segments that hold each new document `spill` times.
Status add_ivf_delta(IvfIndex& index, std::span<const std::uint8_t> bytes,
                     const std::filesystem::path& file);

// ivf.bin, checked: shape limits before allocation, finite values, contiguous segments whose
// sizes match their counts, nothing trailing.
Result<IvfIndex> load_ivf(const std::filesystem::path& file);
// The same from bytes (`file` names them in errors).
Result<IvfIndex> parse_ivf(std::span<const std::uint8_t> bytes, const std::filesystem::path& file);

// kDataLoss unless the directory (with its generations) is of the manifest's collection (N and
// d'): what client and provider check before using it.
Status check_ivf_matches(const IvfIndex& index, const Manifest& manifest);

// The `nprobe` lists whose centroids have the largest inner product with the query's first r
// coordinates (query: d' values), best first, ties by the smaller list.
std::vector<std::uint32_t> route_query(const IvfIndex& index, std::span<const float> query,
                                       std::size_t nprobe);

// One decoded posting list.
struct IvfList {
  std::uint32_t list = 0;
  std::uint32_t generation = 0;  // 0: the base segment; g: the list's additions of update g
  std::size_t count = 0;
  std::vector<std::uint32_t> ids;
  std::vector<std::uint8_t> blocked;  // ceil(count / 64) x M x 64
  CodeSegment segment() const { return {blocked.data(), count, ids.data()}; }
  std::size_t memory_bytes() const { return ids.size() * 4 + blocked.size(); }
};

// Decodes list `list`'s segment bytes of `generation` (0: the base): kDataLoss unless its
// SHA-256 is the directory's (a tampered, truncated or misplaced segment), the header names this
// list, M and count match, and its ids are ascending and inside the generation's documents.
Result<IvfList> decode_list(const IvfIndex& index, std::uint32_t list,
                            std::span<const std::uint8_t> segment, std::uint32_t generation = 0);

// The top k documents over the given lists (same contract as scan_top_k; a document found in
// several of them counts once; `deleted`, ascending, are never returned).
Result<std::vector<std::uint32_t>> ivf_search(const IvfIndex& index,
                                              std::span<const IvfList* const> lists,
                                              std::span<const float> query, std::size_t k,
                                              std::span<const std::uint32_t> deleted = {});

// The provider's view of ivf_lists.bin: segments read with pread from the descriptor opened at
// load (a file truncated while serving is an error, never a signal). open() reads every segment
// once, checks it against the directory's SHA-256 (kDataLoss naming the list otherwise) and
// records its fast fingerprint (core/fast_hash.h), which segment() checks whenever it serves it
// (~1 ms less per 32-list probe than SHA-256 at 10M documents; clients check the SHA-256 of
// every segment they receive themselves). Given the store of the version served before, open()
// takes the fingerprints of segments whose file and directory entry are unchanged from it
// instead of reading them again (a reload after an update reads only the new segments).
// Thread safety: segment() may run concurrently. Move-only.
class IvfListStore {
 public:
  static Result<IvfListStore> open(const std::filesystem::path& file, IvfIndex index,
                                   const IvfListStore* previous = nullptr);
  // Opens generation g's lists file (generations in order, 1 first; the index must hold g's
  // directory).
  Status open_generation(std::uint32_t generation, const std::filesystem::path& file,
                         const IvfListStore* previous = nullptr);
  IvfListStore(IvfListStore&& o) noexcept;
  IvfListStore& operator=(IvfListStore&& o) noexcept;
  IvfListStore(const IvfListStore&) = delete;
  IvfListStore& operator=(const IvfListStore&) = delete;
  ~IvfListStore();

  const IvfIndex& index() const { return index_; }
  // List `list`'s segment bytes: kOutOfRange for a list outside the index, kDataLoss when the
  // bytes on disk are no longer the ones the directory names.
  // kNotFound when the list has no segment in `generation` (or the generation is unknown).
  Result<std::string> segment(std::uint32_t list, std::uint32_t generation = 0) const;

 private:
  IvfListStore() = default;
  // Checks generation g's segments against the directory and records their fingerprints.
  Status fingerprint(std::uint32_t generation, const IvfListStore* previous);
  Result<std::string> read_segment(std::uint32_t list, std::uint32_t generation) const;

  IvfIndex index_;
  std::vector<int> fds_;                                  // per generation, the base first
  std::vector<std::vector<std::uint64_t>> fingerprints_;  // per generation, per list
};

}  // namespace privsearch::index
