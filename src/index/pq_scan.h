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
#include "index/pq.h"

namespace privsearch::index {

// The codes of `count` documents in the scan's block layout (ceil(count / 64), m, 64), padding
// zero, and their document ids (null: the documents are first_id .. first_id + count - 1). A
// flat artifact is one segment per generation; an IVF search (index/ivf.h) scans the segments
// of the lists it probed.
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
