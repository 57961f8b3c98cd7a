// Shared by the IVF and segment-scan tests: clustered rows, random queries, the reference top-k
// over a subset, code segments of parts of a PQ artifact.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/csprng.h"
#include "index/candidates/ivf.h"
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

// Checks a base build's balanced assignment (ivf.h, balanced_assignment) from the lists each row
// landed in (`lists_of_row`) and their sizes, by brute force over the (binary16) centroids on the
// route prefix r: every row in `spill` lists, its best list among them, no list over the cap, and
// no copy put below a better choice that still has room at the end (fills only grow, so such a
// choice had room in its round). Scores within 1e-4 count as ties (BLAS and this loop round
// differently). Returns how many copies went below a better choice (the cap at work).
inline std::size_t expect_balanced(const Matrix& x, std::size_t r,
                                   const std::vector<float>& centroids, std::size_t spill,
                                   const std::vector<std::vector<std::uint32_t>>& lists_of_row,
                                   const std::vector<std::size_t>& counts) {
  const std::size_t lists = counts.size();
  std::vector<std::vector<std::pair<float, std::uint32_t>>> ranked(x.rows);
  std::vector<std::uint32_t> firsts(x.rows);
  for (std::size_t d = 0; d < x.rows; ++d) {
    for (std::uint32_t l = 0; l < lists; ++l) {
      float s = 0;
      for (std::size_t j = 0; j < r; ++j) s += x.row(d)[j] * centroids[l * r + j];
      ranked[d].push_back({s, l});
    }
    std::stable_sort(ranked[d].begin(), ranked[d].end(),
                     [](auto a, auto b) { return a.first > b.first; });
    firsts[d] = ranked[d][0].second;
  }
  const std::size_t cap = balanced_list_cap(firsts, lists, spill);
  EXPECT_LE(*std::max_element(counts.begin(), counts.end()), cap);
  std::size_t violations = 0, displaced = 0;
  std::string first;
  auto violation = [&](const std::string& what) {
    if (violations++ == 0) first = what;
  };
  for (std::size_t d = 0; d < x.rows; ++d) {
    const auto& mine = lists_of_row[d];
    if (mine.size() != spill) violation("row " + std::to_string(d) + ": wrong number of lists");
    auto score_of = [&](std::uint32_t l) {
      return std::find_if(ranked[d].begin(), ranked[d].end(), [&](auto p) { return p.second == l; })
          ->first;
    };
    float best_held = -INFINITY;
    for (const auto l : mine) best_held = std::max(best_held, score_of(l));
    if (ranked[d][0].first - best_held > 1e-4f)
      violation("row " + std::to_string(d) + ": not in its best list");
    for (const auto l : mine) {
      const float s = score_of(l);
      const std::size_t choices = std::min(kListChoices, lists);
      for (std::size_t k = 1; k < choices; ++k) {
        const auto [better, lb] = ranked[d][k];
        if (better <= s + 1e-4f) break;  // the rest score no better than this copy's list
        const bool held = std::find(mine.begin(), mine.end(), lb) != mine.end();
        if (!held) ++displaced;
        if (!held && counts[lb] < cap) {
          violation("row " + std::to_string(d) + " in list " + std::to_string(l) +
                    " while its better choice " + std::to_string(lb) + " has room");
        }
      }
    }
  }
  EXPECT_EQ(violations, 0u) << first;
  return displaced;
}

}  // namespace privsearch::index::test_util
