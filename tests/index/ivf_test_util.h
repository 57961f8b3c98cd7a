// Shared by the IVF and segment-scan tests: clustered rows, random queries, the reference top-k
// over a subset, code segments of parts of a PQ artifact.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/csprng.h"
#include "index/candidates/pq.h"
#include "index/candidates/pq_scan.h"
#include "index/vectors_io.h"
#include "testing/test_util.h"

namespace privsearch::index::test_util {

// n points around `clusters` random centres in d dimensions (a collection with topics).
inline Matrix blobs(std::size_t n, std::size_t d, std::size_t clusters, std::uint64_t seed) {
  Prng p = testing::test_prng(seed);
  std::vector<float> centres(clusters * d);
  for (auto& v : centres) v = static_cast<float>(2 * testing::uniform_pm1(p));
  Matrix m;
  m.rows = n;
  m.cols = d;
  m.data.resize(n * d);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t c = p.uniform_below(clusters);
    for (std::size_t j = 0; j < d; ++j) {
      m.data[i * d + j] = centres[c * d + j] + static_cast<float>(0.5 * testing::uniform_pm1(p));
    }
  }
  return m;
}

inline std::vector<float> random_query(Prng& p, std::size_t d) {
  std::vector<float> q(d);
  for (auto& v : q) v = static_cast<float>(testing::uniform_pm1(p));
  return q;
}

// The reference top k over the documents `ids` only: pq_search on an artifact of their codes.
inline std::vector<std::uint32_t> reference_subset(const PqArtifact& a,
                                                   const std::vector<std::uint32_t>& ids,
                                                   std::span<const float> q, std::size_t k) {
  PqArtifact sub;
  sub.codebook = a.codebook;
  sub.count = ids.size();
  for (const auto id : ids) {
    sub.codes.insert(sub.codes.end(), a.codes.begin() + std::ptrdiff_t{id} * a.codebook.m,
                     a.codes.begin() + std::ptrdiff_t{id + 1} * a.codebook.m);
  }
  auto top = *pq_search(sub, q, k);
  for (auto& t : top) t = ids[t];  // ids ascending: ties keep the smaller id first
  return top;
}

// Segments over the documents of each part (ids ascending; `blocked` keeps their codes).
inline std::vector<CodeSegment> code_segments(const PqArtifact& a,
                                              const std::vector<std::vector<std::uint32_t>>& parts,
                                              std::vector<std::vector<std::uint8_t>>& blocked) {
  const std::size_t m = a.codebook.m;
  blocked.clear();
  for (const auto& ids : parts) {
    std::vector<std::uint8_t> codes;
    for (const auto id : ids) {
      codes.insert(codes.end(), a.codes.begin() + std::ptrdiff_t{id} * std::ptrdiff_t(m),
                   a.codes.begin() + std::ptrdiff_t{id + 1} * std::ptrdiff_t(m));
    }
    blocked.push_back(block_codes(codes.data(), ids.size(), m));
  }
  std::vector<CodeSegment> segments;
  for (std::size_t s = 0; s < parts.size(); ++s) {
    segments.push_back({blocked[s].data(), parts[s].size(), parts[s].data()});
  }
  return segments;
}

}  // namespace privsearch::index::test_util
