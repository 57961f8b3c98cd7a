// Fast exhaustive PQ scan (client candidate search) with AVX-512 VBMI.
//
// Codes are kept transposed in blocks of 64 documents (layout (n/64, m, 64)). Per query, each
// subquantizer's 256-entry inner-product table is quantized to bytes with one step delta over
// all tables: t8[j][c] = round((lut[j][c] - min_j) / delta). For 64 documents at a time, byte
// lookups (two vpermi2b over 128 entries each, selected by the code's top bit) are summed in
// 16-bit lanes (m * 255 < 2^16 for m <= 257). The approximate score differs from the float
// score by at most m * delta / 2 (plus the constant sum_j min_j), so every document whose
// approximate score is within m * delta of the K-th best can be in the true top K: those are
// rescored exactly in float and the exact top K is returned (ties by document index), i.e. the
// same result as pq_search().
// Thread safety: the scanner is immutable; search may run concurrently.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"
#include "index/candidates/pq.h"

namespace privsearch::index {

// The codes of `count` documents in the scan's block layout (ceil(count / 64), m, 64), padding
// zero, and their document ids (null: the documents are first_id .. first_id + count - 1). A
// flat artifact is one segment per generation; an IVF search (index/candidates/ivf.h) scans the
// segments of the lists it probed.
struct CodeSegment {
  const std::uint8_t* blocked = nullptr;
  std::size_t count = 0;
  const std::uint32_t* ids = nullptr;
  std::uint32_t first_id = 0;
};

// `codes` ((count, m), one row per document) in the block layout.
std::vector<std::uint8_t> block_codes(const std::uint8_t* codes, std::size_t count, std::size_t m);

// The top k document ids over all segments by approximate inner product with `query`, best first,
// ties by the smaller id: the same result as pq_search over the union of the segments. A
// document may be in up to `copies` segments (with the same code); it is returned once; the
// `deleted` ids (ascending: an update's tombstones) never are. Uses the VBMI kernel when the CPU
// has it, else a scalar loop that computes the same byte sums.
Result<std::vector<std::uint32_t>> scan_top_k(const PqCodebook& codebook,
                                              std::span<const CodeSegment> segments,
                                              std::span<const float> query, std::size_t k,
                                              std::size_t copies = 1,
                                              std::span<const std::uint32_t> deleted = {});

namespace detail {
// The quantity every segment's scan needs once per query: the float tables
// lut[j][c] = <q_j, centroid_{j,c}> and their byte quantization with one step for all tables.
struct QueryTables {
  std::vector<float> lut;        // m x 256
  std::vector<std::uint8_t> t8;  // m x 256
};
}  // namespace detail

// scan_top_k in steps, for segments that arrive one at a time (an IVF probe's lists as they are
// fetched): the query's tables once, each segment's byte sums when it is added, the top k at the
// end. The result is scan_top_k's over the segments added, in whatever order they came (the
// final ranking is a total order on (score, id)).
class SegmentScan {
 public:
  // kInvalidArgument: a codebook shape the scan does not support, a query of the wrong size.
  static Result<SegmentScan> create(const PqCodebook& codebook, std::span<const float> query);
  // Scans `segment` now; its codes and ids must stay valid until top_k().
  void add(const CodeSegment& segment);
  std::size_t documents() const { return total_; }
  // scan_top_k's contract for `k`, `copies` and `deleted`.
  std::vector<std::uint32_t> top_k(std::size_t k, std::size_t copies = 1,
                                   std::span<const std::uint32_t> deleted = {}) const;

 private:
  SegmentScan() = default;
  std::size_t m_ = 0, total_ = 0;
  bool simd_ = false;
  detail::QueryTables tables_;
  std::vector<CodeSegment> segments_;
  std::vector<std::vector<std::uint16_t>> approx_;  // per segment, whole blocks
  std::vector<std::uint32_t> histogram_;            // of every 16-bit sum so far
};

class PqScanner {
 public:
  // Transposes the artifact's codes (kept by reference: the artifact must outlive the scanner).
  static Result<PqScanner> create(const PqArtifact& artifact);
  // Same contract as pq_search(); uses the AVX-512 VBMI kernel when the CPU has it.
  Result<std::vector<std::uint32_t>> search(std::span<const float> query, std::size_t k) const;
  bool uses_simd() const { return simd_; }

 private:
  explicit PqScanner(const PqArtifact& a) : artifact_(&a) {}
  const PqArtifact* artifact_;
  std::vector<std::uint8_t> blocked_;  // (ceil(n/64), m, 64)
  bool simd_ = false;
};

namespace detail {
bool vbmi_available();
// Adds, for every document of every block, the byte table entries of its codes.
// out: blocks * 64 uint16 sums. The scalar loop is the reference the kernel is tested against.
void scan_blocks_scalar(const std::uint8_t* blocked, std::size_t blocks, std::size_t m,
                        const std::uint8_t* tables /* m x 256 */, std::uint16_t* out);
void scan_blocks_vbmi(const std::uint8_t* blocked, std::size_t blocks, std::size_t m,
                      const std::uint8_t* tables /* m x 256 */, std::uint16_t* out);
}  // namespace detail

}  // namespace privsearch::index
