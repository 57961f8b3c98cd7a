#include "index/candidates/pq_scan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace privsearch::index {

namespace {

using detail::QueryTables;

QueryTables query_tables(const PqCodebook& cb, std::span<const float> q) {
  const std::size_t m = cb.m;
  QueryTables t;
  t.lut.resize(m * 256);
  std::vector<float> mins(m);
  float max_range = 0;
  for (std::size_t j = 0; j < m; ++j) {
    float lo = INFINITY, hi = -INFINITY;
    for (std::size_t c = 0; c < 256; ++c) {
      const float* cen = cb.centroids.data() + (j * 256 + c) * cb.dsub;
      float s = 0;
      for (std::size_t u = 0; u < cb.dsub; ++u) s += q[j * cb.dsub + u] * cen[u];
      t.lut[j * 256 + c] = s;
      lo = std::min(lo, s);
      hi = std::max(hi, s);
    }
    mins[j] = lo;
    max_range = std::max(max_range, hi - lo);
  }
  const float delta = max_range > 0 ? max_range / 255.0f : 1.0f;
  t.t8.resize(m * 256);
  for (std::size_t j = 0; j < m; ++j) {
    for (std::size_t c = 0; c < 256; ++c) {
      const float v = std::nearbyint((t.lut[j * 256 + c] - mins[j]) / delta);
      t.t8[j * 256 + c] = static_cast<std::uint8_t>(std::clamp(v, 0.0f, 255.0f));
    }
  }
  return t;
}

}  // namespace

std::vector<std::uint8_t> block_codes(const std::uint8_t* codes, std::size_t count, std::size_t m) {
  std::vector<std::uint8_t> blocked(((count + 63) / 64) * m * 64, 0);
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint8_t* code = codes + i * m;
    std::uint8_t* dst = blocked.data() + (i / 64) * m * 64 + (i % 64);
    for (std::size_t j = 0; j < m; ++j) dst[j * 64] = code[j];
  }
  return blocked;
}

Result<SegmentScan> SegmentScan::create(const PqCodebook& cb, std::span<const float> q) {
  if (cb.m == 0 || cb.m > 257 || cb.ksub != 256) {
    return invalid_argument_error("PQ codebook shape unsupported by the fast scan");
  }
  if (q.size() != cb.dim) {
    return invalid_argument_error(
        fmt::format("query has {} values; the PQ artifact has d' = {}", q.size(), cb.dim));
  }
  SegmentScan scan;
  scan.m_ = cb.m;
  scan.tables_ = query_tables(cb, q);
  scan.simd_ = detail::vbmi_available();
  scan.histogram_.assign(65536, 0);
  return scan;
}

void SegmentScan::add(const CodeSegment& segment) {
  // approx: 16-bit sums, one run of whole blocks per segment.
  const std::size_t blocks = (segment.count + 63) / 64;
  std::vector<std::uint16_t> approx(blocks * 64);
  if (simd_) {
    detail::scan_blocks_vbmi(segment.blocked, blocks, m_, tables_.t8.data(), approx.data());
  } else {
    detail::scan_blocks_scalar(segment.blocked, blocks, m_, tables_.t8.data(), approx.data());
  }
  for (std::size_t i = 0; i < segment.count; ++i) ++histogram_[approx[i]];
  total_ += segment.count;
  segments_.push_back(segment);
  approx_.push_back(std::move(approx));
}

namespace {

bool is_deleted(std::span<const std::uint32_t> deleted, std::uint32_t id) {
  return !deleted.empty() && std::binary_search(deleted.begin(), deleted.end(), id);
}

// How many of the scanned entries are deleted documents (skipped when the pool is made, so the
// bound of top_k reaches that many further down).
std::size_t deleted_entries(std::span<const CodeSegment> segments,
                            std::span<const std::uint32_t> deleted) {
  std::size_t out = 0;
  for (const auto& seg : segments) {
    if (deleted.empty()) break;
    if (seg.ids != nullptr) {
      for (std::size_t i = 0; i < seg.count; ++i) out += is_deleted(deleted, seg.ids[i]) ? 1 : 0;
    } else {
      out += static_cast<std::size_t>(
          std::lower_bound(deleted.begin(), deleted.end(), seg.first_id + seg.count) -
          std::lower_bound(deleted.begin(), deleted.end(), seg.first_id));
    }
  }
  return out;
}

// The `entries`-th largest 16-bit score, from the histogram (one pass, no sort of a million
// values).
std::size_t kth_value(std::span<const std::uint32_t> histogram, std::size_t entries) {
  std::size_t seen = 0;
  for (std::size_t v = 65536; v-- > 0;) {
    seen += histogram[v];
    if (seen >= entries) return v;
  }
  return 65535;
}

struct ScoredId {
  float score;
  std::uint32_t id;
};

// Every live entry whose approximate score can reach the top (within `slack` of the k-th),
// rescored exactly from the block layout: code j of document i is at block i / 64, row j.
std::vector<ScoredId> rescored_pool(std::span<const CodeSegment> segments,
                                    const std::vector<std::vector<std::uint16_t>>& approx,
                                    const detail::QueryTables& tables, std::size_t m, double kth,
                                    double slack, std::span<const std::uint32_t> deleted) {
  std::vector<ScoredId> pool;
  for (std::size_t s = 0; s < segments.size(); ++s) {
    const CodeSegment& seg = segments[s];
    for (std::size_t i = 0; i < seg.count; ++i) {
      if (static_cast<double>(approx[s][i]) < kth - slack) continue;
      const std::uint8_t* base = seg.blocked + (i / 64) * m * 64 + (i % 64);
      float score = 0;
      for (std::size_t j = 0; j < m; ++j) score += tables.lut[j * 256 + base[j * 64]];
      const std::uint32_t id =
          seg.ids != nullptr ? seg.ids[i] : seg.first_id + static_cast<std::uint32_t>(i);
      if (is_deleted(deleted, id)) continue;
      pool.push_back({score, id});
    }
  }
  return pool;
}

// The k best distinct documents of the pool (best score first, ties by id).
std::vector<std::uint32_t> best_distinct(std::vector<ScoredId>& pool, std::size_t k,
                                         std::size_t copies) {
  const auto better = [](const ScoredId& x, const ScoredId& y) {
    return x.score > y.score || (x.score == y.score && x.id < y.id);
  };
  std::vector<std::uint32_t> out;
  if (copies <= 1) {
    const std::size_t kk = std::min(k, pool.size());
    std::partial_sort(pool.begin(), pool.begin() + static_cast<std::ptrdiff_t>(kk), pool.end(),
                      better);
    for (std::size_t i = 0; i < kk; ++i) out.push_back(pool[i].id);
    return out;
  }
  // Copies of a document have the same code, so the same score: adjacent after sorting.
  std::sort(pool.begin(), pool.end(), better);
  for (std::size_t i = 0; i < pool.size() && out.size() < k; ++i) {
    if (i == 0 || pool[i].id != pool[i - 1].id) out.push_back(pool[i].id);
  }
  return out;
}

}  // namespace

std::vector<std::uint32_t> SegmentScan::top_k(std::size_t k, std::size_t copies,
                                              std::span<const std::uint32_t> deleted) const {
  k = std::min(k, total_);
  if (k == 0) return {};
  // The K-th largest 16-bit score, then the candidate pool within the error bound:
  // |approx * delta + sum(mins) - exact| <= m * delta / 2 (+ float rounding), so anything within
  // m * delta of the K-th can be in the top K. With documents in up to `copies` segments, the
  // (k * copies)-th entry bounds the k-th distinct document from below; deleted entries are
  // skipped, so the bound reaches that many further down.
  const std::size_t entries =
      std::min(k * std::max<std::size_t>(copies, 1) + deleted_entries(segments_, deleted), total_);
  const double kth = static_cast<double>(kth_value(histogram_, entries));
  const double slack = static_cast<double>(m_) + 2.0;  // m * delta (two half-errors), in delta
  auto pool = rescored_pool(segments_, approx_, tables_, m_, kth, slack, deleted);
  return best_distinct(pool, k, copies);
}

Result<std::vector<std::uint32_t>> scan_top_k(const PqCodebook& cb,
                                              std::span<const CodeSegment> segments,
                                              std::span<const float> q, std::size_t k,
                                              std::size_t copies,
                                              std::span<const std::uint32_t> deleted) {
  PRIVSEARCH_ASSIGN_OR_RETURN(auto scan, SegmentScan::create(cb, q));
  for (const auto& s : segments) scan.add(s);
  return scan.top_k(k, copies, deleted);
}

Result<PqScanner> PqScanner::create(const PqArtifact& a) {
  const std::size_t m = a.codebook.m;
  if (m == 0 || m > 257 || a.codebook.ksub != 256 || a.codes.size() != a.count * m) {
    return invalid_argument_error("PQ artifact shape unsupported by the fast scan");
  }
  PqScanner s(a);
  s.simd_ = detail::vbmi_available();
  s.blocked_ = block_codes(a.codes.data(), a.count, m);
  return s;
}

Result<std::vector<std::uint32_t>> PqScanner::search(std::span<const float> q,
                                                     std::size_t k) const {
  const CodeSegment whole{blocked_.data(), artifact_->count, nullptr};
  return scan_top_k(artifact_->codebook, std::span(&whole, 1), q, k);
}

namespace detail {

void scan_blocks_scalar(const std::uint8_t* blocked, std::size_t blocks, std::size_t m,
                        const std::uint8_t* tables, std::uint16_t* out) {
  for (std::size_t blk = 0; blk < blocks; ++blk) {
    std::uint16_t acc[64] = {};
    const std::uint8_t* codes = blocked + blk * m * 64;
    for (std::size_t j = 0; j < m; ++j) {
      const std::uint8_t* t = tables + j * 256;
      for (std::size_t lane = 0; lane < 64; ++lane) acc[lane] += t[codes[j * 64 + lane]];
    }
    std::copy_n(acc, 64, out + blk * 64);
  }
}

}  // namespace detail

}  // namespace privsearch::index
