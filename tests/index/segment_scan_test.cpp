// The segment scan (index/candidates/pq_scan.h) against the flat reference, and the routing kernel
// (index/candidates/route_kernel.h) against the product in double.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/bytes.h"
#include "core/csprng.h"
#include "core/half.h"
#include "index/artifacts/atomic_file.h"
#include "index/candidates/ivf.h"
#include "index/candidates/pq.h"
#include "index/candidates/pq_scan.h"
#include "index/candidates/route_kernel.h"
#include "index/ivf_test_util.h"
#include "testing/test_util.h"

namespace privsearch::index {
namespace {

namespace fs = std::filesystem;

using test_util::blobs;
using test_util::code_segments;
using test_util::random_query;
using test_util::reference_subset;

TEST(SegmentScan, ScalarBlockSumsAreTheKernels) {
  if (!detail::vbmi_available()) GTEST_SKIP() << "no AVX-512 VBMI on this CPU";
  Prng p = testing::test_prng(40);
  for (const std::size_t m : {1u, 7u, 84u, 257u}) {
    std::vector<std::uint8_t> blocked(3 * m * 64), tables(m * 256);
    p.fill(blocked);
    p.fill(tables);
    std::vector<std::uint16_t> a(3 * 64), b(3 * 64);
    detail::scan_blocks_scalar(blocked.data(), 3, m, tables.data(), a.data());
    detail::scan_blocks_vbmi(blocked.data(), 3, m, tables.data(), b.data());
    EXPECT_EQ(a, b) << "m = " << m;
  }
}

TEST(SegmentScan, SegmentsWithIdsScanLikeTheReferenceOverTheirDocuments) {
  const auto x = blobs(2000, 32, 12, 41);
  PqOptions o;
  o.m = 8;
  const auto a = *build_pq(x, o);
  Prng p = testing::test_prng(42);
  // A random partition of the documents into 5 segments (ids ascending in each), one left out.
  std::vector<std::vector<std::uint32_t>> parts(5);
  for (std::uint32_t d = 0; d < 2000; ++d) parts[p.uniform_below(5)].push_back(d);
  parts.pop_back();
  std::vector<std::vector<std::uint8_t>> blocked;
  const auto segments = code_segments(a, parts, blocked);
  std::vector<std::uint32_t> covered;
  for (const auto& part : parts) covered.insert(covered.end(), part.begin(), part.end());
  std::sort(covered.begin(), covered.end());
  for (int trial = 0; trial < 8; ++trial) {
    const auto q = random_query(p, 32);
    for (const std::size_t k : {1u, 10u, 100u, 5000u}) {
      EXPECT_EQ(*scan_top_k(a.codebook, segments, q, k), reference_subset(a, covered, q, k))
          << "k = " << k;
    }
  }
  EXPECT_TRUE(scan_top_k(a.codebook, {}, random_query(p, 32), 10)->empty());
  EXPECT_EQ(scan_top_k(a.codebook, segments, random_query(p, 31), 10).status().code(),
            StatusCode::kInvalidArgument);
}

// Segments added one at a time, in any order, rank like scan_top_k over all of them (what the
// client does with lists as they arrive), with copies and deletions too.
TEST(SegmentScan, SegmentsAddedInAnyOrderRankLikeOneScan) {
  const auto x = blobs(1500, 32, 10, 44);
  PqOptions o;
  o.m = 8;
  const auto a = *build_pq(x, o);
  Prng p = testing::test_prng(45);
  // 6 segments; every document in two of them (spill 2, the same code in both).
  std::vector<std::vector<std::uint32_t>> parts(6);
  for (std::uint32_t d = 0; d < 1500; ++d) {
    const auto first = p.uniform_below(6);
    parts[first].push_back(d);
    parts[(first + 1 + p.uniform_below(5)) % 6].push_back(d);
  }
  for (auto& ids : parts) std::sort(ids.begin(), ids.end());
  std::vector<std::vector<std::uint8_t>> blocked;
  const auto segments = code_segments(a, parts, blocked);
  const std::vector<std::uint32_t> deleted{3, 17, 400, 1499};
  for (int trial = 0; trial < 6; ++trial) {
    const auto q = random_query(p, 32);
    std::vector<CodeSegment> order = segments;
    for (std::size_t i = order.size(); i > 1; --i)
      std::swap(order[i - 1], order[p.uniform_below(i)]);
    auto scan = *SegmentScan::create(a.codebook, q);
    for (const auto& seg : order) scan.add(seg);
    EXPECT_EQ(scan.documents(), 3000u);
    for (const std::size_t k : {1u, 10u, 100u, 2000u}) {
      EXPECT_EQ(scan.top_k(k, 2), *scan_top_k(a.codebook, segments, q, k, 2)) << "k = " << k;
      EXPECT_EQ(scan.top_k(k, 2, deleted), *scan_top_k(a.codebook, segments, q, k, 2, deleted))
          << "k = " << k;
    }
    // And scan_top_k with copies is the reference over the distinct documents.
    std::vector<std::uint32_t> all(1500);
    for (std::uint32_t d = 0; d < 1500; ++d) all[d] = d;
    EXPECT_EQ(scan.top_k(50, 2), reference_subset(a, all, q, 50));
  }
  EXPECT_EQ(SegmentScan::create(a.codebook, random_query(p, 33)).status().code(),
            StatusCode::kInvalidArgument);
}

// The routing product over binary16 centroids: the AVX-512 kernel and the scalar loop both
// equal the product in double up to float rounding, for widths around the kernel's 16 and 32.
TEST(RouteKernel, HalfMatvecMatchesTheProductInDouble) {
  Prng p = testing::test_prng(46);
  for (const std::size_t cols : {1u, 15u, 16u, 17u, 33u, 128u, 130u}) {
    const std::size_t rows = 37;
    std::vector<std::uint16_t> table(rows * cols);
    std::vector<float> widened(rows * cols), q(cols);
    for (std::size_t i = 0; i < table.size(); ++i) {
      widened[i] = round_to_half(static_cast<float>(testing::uniform_pm1(p)));
      table[i] = float_to_half_bits(widened[i]);
    }
    for (auto& v : q) v = static_cast<float>(testing::uniform_pm1(p));
    std::vector<float> scalar(rows), dispatched(rows), wide(rows);
    detail::half_matvec_scalar(table.data(), rows, cols, q.data(), scalar.data());
    half_matvec(table.data(), rows, cols, q.data(), dispatched.data());
    const bool simd = detail::avx512f_available();
    if (simd) detail::half_matvec_avx512(table.data(), rows, cols, q.data(), wide.data());
    for (std::size_t l = 0; l < rows; ++l) {
      double exact = 0, magnitude = 0;
      for (std::size_t j = 0; j < cols; ++j) {
        exact += static_cast<double>(widened[l * cols + j]) * q[j];
        magnitude += std::fabs(static_cast<double>(widened[l * cols + j]) * q[j]);
      }
      const double tolerance = 1e-6 * magnitude + 1e-12;
      EXPECT_NEAR(scalar[l], exact, tolerance) << cols << " cols, row " << l;
      EXPECT_NEAR(dispatched[l], exact, tolerance) << cols << " cols, row " << l;
      if (simd) {
        EXPECT_NEAR(wide[l], exact, tolerance) << cols << " cols, row " << l;
      }
    }
  }
}

}  // namespace
}  // namespace privsearch::index
