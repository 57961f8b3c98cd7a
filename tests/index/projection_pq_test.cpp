#include <faiss/impl/ProductQuantizer.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/csprng.h"
#include "index/candidates/pq.h"
#include "index/candidates/projection.h"
#include "testing/test_util.h"

namespace privsearch::index {
namespace {

// n x d data of rank r (plus an offset mean), from the test generator.
Matrix low_rank(std::size_t n, std::size_t d, std::size_t r, std::uint64_t seed) {
  Prng p = testing::test_prng(seed);
  std::vector<double> f(n * r), g(r * d), offset(d);
  for (auto& v : f) v = testing::uniform_pm1(p);
  for (auto& v : g) v = testing::uniform_pm1(p);
  for (auto& v : offset) v = 3 * testing::uniform_pm1(p);
  Matrix m;
  m.rows = n;
  m.cols = d;
  m.data.resize(n * d);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t c = 0; c < d; ++c) {
      double s = offset[c];
      for (std::size_t k = 0; k < r; ++k) s += f[i * r + k] * g[k * d + c];
      m.data[i * d + c] = static_cast<float>(s);
    }
  }
  return m;
}

double max_gram_error(const Projection& p) {
  double worst = 0;
  for (std::size_t a = 0; a < p.output_dim; ++a) {
    for (std::size_t b = 0; b < p.output_dim; ++b) {
      double s = 0;
      for (std::size_t c = 0; c < p.input_dim; ++c) {
        s += double(p.basis[c * p.output_dim + a]) * p.basis[c * p.output_dim + b];
      }
      worst = std::fmax(worst, std::fabs(s - (a == b ? 1.0 : 0.0)));
    }
  }
  return worst;
}

TEST(Svd, BasisIsOrthonormalAndCapturesLowRankData) {
  const auto m = low_rank(600, 48, 6, 1);
  const auto p = *fit_svd(m, 10, SvdOptions{});
  EXPECT_LT(max_gram_error(p), 1e-5);
  EXPECT_GT(p.retained_variance, 0.999999);  // rank 6 < 10
  for (std::size_t j = 1; j < p.singular_values.size(); ++j) {
    EXPECT_GE(p.singular_values[j - 1], p.singular_values[j]);
  }
  // Reconstruction: (d - mu) V V^T + mu == d for every document.
  const auto x = p.project_documents(m);
  double worst = 0;
  for (std::size_t i = 0; i < m.rows; ++i) {
    for (std::size_t c = 0; c < m.cols; ++c) {
      double r = p.mean[c];
      for (std::size_t j = 0; j < p.output_dim; ++j)
        r += double(x.row(i)[j]) * p.basis[c * p.output_dim + j];
      worst = std::fmax(worst, std::fabs(r - m.row(i)[c]));
    }
  }
  EXPECT_LT(worst, 1e-3);
}

TEST(Svd, NestedPrefixesAreTheSmallerProjections) {
  const auto m = low_rank(400, 32, 12, 2);
  const auto p = *fit_svd(m, 12, SvdOptions{});
  const auto full = p.project_documents(m);
  const auto small = p.project_documents(m, 5);
  ASSERT_EQ(small.cols, 5u);
  for (std::size_t i = 0; i < m.rows; ++i) {
    // Same values up to float summation order (the GEMM blocks differently for 5 and 12 columns).
    for (std::size_t j = 0; j < 5; ++j) {
      EXPECT_NEAR(small.row(i)[j], full.row(i)[j], 1e-5f * (1.0f + std::abs(full.row(i)[j])));
    }
  }
  const std::vector<float> q(m.row(0), m.row(0) + m.cols);
  EXPECT_EQ(p.project_query(q, 5).size(), 5u);
  // Against the definition (d - mu) V, in double precision.
  for (std::size_t i = 0; i < m.rows; i += 37) {
    for (std::size_t j = 0; j < 12; ++j) {
      double want = 0;
      for (std::size_t c = 0; c < m.cols; ++c) {
        want += (double{m.row(i)[c]} - p.mean[c]) * p.basis[c * p.output_dim + j];
      }
      EXPECT_NEAR(full.row(i)[j], want, 1e-5 * (1.0 + std::abs(want)));
    }
  }
}

TEST(Svd, IsDeterministicForASeed) {
  const auto m = low_rank(300, 24, 8, 3);
  SvdOptions o;
  o.sample_size = 200;
  const auto a = *fit_svd(m, 6, o), b = *fit_svd(m, 6, o);
  EXPECT_EQ(a.basis, b.basis);
  EXPECT_EQ(a.mean, b.mean);
}

TEST(Svd, BadDimensionsAreRejected) {
  const auto m = low_rank(50, 16, 4, 4);
  EXPECT_EQ(fit_svd(m, 0, SvdOptions{}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(fit_svd(m, 17, SvdOptions{}).status().code(), StatusCode::kInvalidArgument);
}

TEST(Controls, FirstCoordinatesAndGaussianAreOrthonormal) {
  const auto m = low_rank(100, 20, 5, 5);
  const auto f = *first_coordinates(m, 7);
  EXPECT_LT(max_gram_error(f), 1e-7);
  const auto x = f.project_documents(m);
  EXPECT_NEAR(x.row(3)[2], m.row(3)[2] - f.mean[2], 1e-5);
  const auto g = *gaussian_orthoprojector(m, 7, 9);
  EXPECT_LT(max_gram_error(g), 1e-5);
  EXPECT_NE(g.basis, (*gaussian_orthoprojector(m, 7, 10)).basis);
}

// The subquantizers trained in parallel give Faiss's own codebook: the reference is
// faiss::ProductQuantizer::train, which trains them one after another with the same seed.
TEST(Pq, ParallelTrainingEqualsFaissSequentialTraining) {
  const auto m = low_rank(1500, 48, 12, 21);
  const std::uint64_t seed = 0x5eedULL;
  const auto ours = *train_pq_codebook(m, 12, seed);
  faiss::ProductQuantizer reference(48, 12, 8);
  reference.cp.seed = static_cast<int>(seed & 0x7fffffff);
  reference.train(m.rows, m.data.data());
  ASSERT_EQ(ours.centroids.size(), reference.centroids.size());
  EXPECT_EQ(ours.centroids, reference.centroids);
  EXPECT_EQ(ours.dsub, reference.dsub);
  EXPECT_EQ(ours.ksub, reference.ksub);
}

TEST(Pq, CodesDecodeNearTheVectorsAndSearchFindsTheBest) {
  const auto m = low_rank(2000, 32, 8, 6);
  PqOptions o;
  o.m = 8;
  o.train_size = 2000;
  const auto a = *build_pq(m, o);
  EXPECT_EQ(a.codes.size(), 2000u * 8u);
  // Reconstruction is close (PQ error well below the data's spread).
  double err = 0, norm = 0;
  for (std::size_t i = 0; i < m.rows; ++i) {
    const auto v = pq_decode(a.codebook, a.codes.data() + i * 8);
    for (std::size_t c = 0; c < m.cols; ++c) {
      err += (v[c] - m.row(i)[c]) * (v[c] - m.row(i)[c]);
      norm += m.row(i)[c] * m.row(i)[c];
    }
  }
  EXPECT_LT(err / norm, 0.05);
  // Search = exact ADC ranking of the decoded vectors.
  const std::vector<float> q(m.row(17), m.row(17) + m.cols);
  const auto top = *pq_search(a, q, 10);
  ASSERT_EQ(top.size(), 10u);
  std::vector<std::pair<float, std::uint32_t>> all;
  for (std::uint32_t i = 0; i < m.rows; ++i) {
    const auto v = pq_decode(a.codebook, a.codes.data() + i * 8);
    float s = 0;
    for (std::size_t c = 0; c < m.cols; ++c) s += v[c] * q[c];
    all.push_back({s, i});
  }
  std::sort(all.begin(), all.end(), [](auto x, auto y) {
    return x.first > y.first || (x.first == y.first && x.second < y.second);
  });
  // The returned ranking has exactly the brute-force scores, in order.
  for (std::size_t i = 0; i < 10; ++i) {
    const auto v = pq_decode(a.codebook, a.codes.data() + top[i] * 8);
    float s = 0;
    for (std::size_t c = 0; c < m.cols; ++c) s += v[c] * q[c];
    EXPECT_NEAR(s, all[i].first, 1e-4) << i;
  }
  EXPECT_EQ(top[0], all[0].second);
}

TEST(Pq, TiesAreBrokenByDocumentIndex) {
  Matrix m;
  m.rows = 300;
  m.cols = 8;
  m.data.assign(300 * 8, 1.0f);  // identical vectors: every score ties
  PqOptions o;
  o.m = 2;
  const auto a = *build_pq(m, o);
  const std::vector<float> q(8, 0.5f);
  const auto top = *pq_search(a, q, 5);
  EXPECT_EQ(top, (std::vector<std::uint32_t>{0, 1, 2, 3, 4}));
}

TEST(Pq, InvalidShapesAreRejected) {
  const auto m = low_rank(500, 30, 4, 7);
  PqOptions o;
  o.m = 7;  // does not divide 30
  EXPECT_EQ(build_pq(m, o).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(build_pq(Matrix{0, 16, {}}, PqOptions{}).status().code(), StatusCode::kInvalidArgument);
  o.m = 5;
  const auto a = *build_pq(m, o);
  EXPECT_EQ(pq_search(a, std::vector<float>(29, 0.f), 3).status().code(),
            StatusCode::kInvalidArgument);
}

// Fewer vectors than a codebook's 256 centroids: they become the codebook (cycled to 256), so
// every vector's code decodes to the vector itself.
TEST(Pq, FewerVectorsThanCentroidsGetExactCodes) {
  const auto small = low_rank(100, 16, 4, 8);
  const auto a = build_pq(small, PqOptions{});
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  const std::size_t m = a->codebook.m;
  for (std::size_t i = 0; i < small.rows; ++i) {
    const auto decoded = pq_decode(a->codebook, a->codes.data() + i * m);
    ASSERT_EQ(decoded.size(), small.cols);
    for (std::size_t j = 0; j < small.cols; ++j) {
      EXPECT_NEAR(decoded[j], small.row(i)[j], 1e-5) << i << "," << j;
    }
  }
}

}  // namespace
}  // namespace privsearch::index

#include "index/candidates/pq_scan.h"

namespace privsearch::index {
namespace {

TEST(PqScan, FastScanReturnsExactlyTheReferenceTopK) {
  const auto m = low_rank(3000, 64, 16, 11);
  PqOptions o;
  o.m = 16;
  const auto a = *build_pq(m, o);
  const auto scanner = *PqScanner::create(a);
  Prng p = testing::test_prng(12);
  for (int trial = 0; trial < 10; ++trial) {
    std::vector<float> q(64);
    for (auto& v : q) v = static_cast<float>(testing::uniform_pm1(p));
    for (std::size_t k : {1u, 10u, 100u, 3000u}) {
      EXPECT_EQ(*scanner.search(q, k), *pq_search(a, q, k)) << "k = " << k;
    }
  }
}

TEST(PqScan, TiesAndPartialBlocksMatchTheReference) {
  Matrix x;
  x.rows = 301;  // not a multiple of 64
  x.cols = 8;
  x.data.assign(301 * 8, 1.0f);
  PqOptions o;
  o.m = 2;
  const auto a = *build_pq(x, o);
  const auto scanner = *PqScanner::create(a);
  const std::vector<float> q(8, 0.5f);
  EXPECT_EQ(*scanner.search(q, 7), *pq_search(a, q, 7));
  EXPECT_EQ(scanner.search(std::vector<float>(7, 0.f), 3).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace privsearch::index
