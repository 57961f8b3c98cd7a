#include "index/candidates/pq.h"

#include <cblas.h>
#include <faiss/Clustering.h>
#include <faiss/IndexFlat.h>
#include <faiss/impl/FaissException.h>
#include <faiss/impl/ProductQuantizer.h>
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <numeric>
#include <string>

#include "core/csprng.h"

namespace privsearch::index {

namespace {

// OpenBLAS single-threaded while in scope, its earlier thread count restored after (a
// process-wide setting: the offline build is the only BLAS user while it trains).
class SingleThreadedBlas {
 public:
  SingleThreadedBlas() : saved_(openblas_get_num_threads()) { openblas_set_num_threads(1); }
  ~SingleThreadedBlas() { openblas_set_num_threads(saved_); }
  SingleThreadedBlas(const SingleThreadedBlas&) = delete;
  SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;

 private:
  int saved_;
};

// Subquantizer `sub`'s k-means over its dsub columns of `sample`: 256 centroids written to
// `centroids` (256 x dsub), as faiss::ProductQuantizer::train does it for one subquantizer
// (the same ClusteringParameters, the same seed for each).
void train_subquantizer(const Matrix& sample, std::size_t dsub, std::size_t sub,
                        const faiss::ClusteringParameters& cp, float* centroids) {
  std::vector<float> slice(sample.rows * dsub);
  for (std::size_t r = 0; r < sample.rows; ++r) {
    std::copy_n(sample.row(r) + sub * dsub, dsub, slice.data() + r * dsub);
  }
  faiss::Clustering clustering(static_cast<int>(dsub), 256, cp);
  faiss::IndexFlatL2 assign(static_cast<faiss::Index::idx_t>(dsub));
  clustering.train(static_cast<faiss::Index::idx_t>(sample.rows), slice.data(), assign);
  std::copy_n(clustering.centroids.data(), 256 * dsub, centroids);
}

}  // namespace

// faiss::ProductQuantizer::train runs the M k-means one after another, each parallel inside
// (an OpenMP region per iteration, OpenBLAS sgemm for the distances). On a 2-core machine with
// another busy process the two thread pools spin against each other: SciFact's M = 84 took
// 12.6 s idle and 22-35 s beside two busy processes. The subquantizers are independent, so they
// are trained in parallel here, one k-means per thread (nested OpenMP regions run on one
// thread), with BLAS single-threaded inside: 3.2 s idle, 3.5 s beside the same two processes.
// No exception may leave an OpenMP region: the first is kept and returned after it.
Result<PqCodebook> train_pq_codebook(const Matrix& sample, std::size_t m, std::uint64_t seed) {
  if (sample.cols == 0 || m == 0 || sample.cols % m != 0) {
    return invalid_argument_error(
        fmt::format("`M` = {} subquantizers must divide the dimension d' = {}", m, sample.cols));
  }
  if (sample.rows == 0) return invalid_argument_error("no training vectors for the PQ codebook");
  // Fewer vectors than the 256 centroids of a byte code (a small collection): they are cycled
  // to exactly 256, which k-means takes as its centroids, so each vector's subvectors are
  // centroids themselves and its code is exact.
  if (sample.rows < 256) {
    Matrix cycled{256, sample.cols, {}};
    cycled.data.reserve(256 * sample.cols);
    for (std::size_t r = 0; r < 256; ++r) {
      cycled.data.insert(cycled.data.end(), sample.row(r % sample.rows),
                         sample.row(r % sample.rows) + sample.cols);
    }
    return train_pq_codebook(cycled, m, seed);
  }
  PqCodebook cb;
  cb.dim = sample.cols;
  cb.m = m;
  cb.ksub = 256;
  cb.dsub = sample.cols / m;
  cb.centroids.resize(m * cb.ksub * cb.dsub);
  // faiss::ProductQuantizer trains with default ClusteringParameters and its seed (the test
  // Pq.ParallelTrainingEqualsFaissSequentialTraining holds the two trainers equal).
  faiss::ClusteringParameters cp;
  cp.seed = static_cast<int>(seed & 0x7fffffff);
  // Only Faiss's warning depends on this ("please provide at least 9984 training points", once
  // per subquantizer: 84 lines a SciFact build): fewer points per centroid train the same.
  cp.min_points_per_centroid = 1;
  // Read before the BLAS guard: OpenBLAS's OpenMP build sets OpenMP's thread count with its own.
  const int threads = omp_get_max_threads();
  const SingleThreadedBlas blas;
  std::atomic<bool> failed{false};
  std::string failure;
  std::mutex failure_mu;
  const auto subquantizers = static_cast<std::int64_t>(m);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (std::int64_t sub = 0; sub < subquantizers; ++sub) {
    if (failed.load()) continue;
    try {
      train_subquantizer(sample, cb.dsub, static_cast<std::size_t>(sub), cp,
                         cb.centroids.data() + static_cast<std::size_t>(sub) * 256 * cb.dsub);
    } catch (const std::exception& e) {  // faiss::FaissException, std::bad_alloc
      const std::lock_guard lock(failure_mu);
      if (!failed.exchange(true)) {
        try {
          failure = e.what();
        } catch (...) {  // no exception may leave the region
        }
      }
    }
  }
  if (failed) return internal_error(fmt::format("Faiss PQ training failed: {}", failure));
  return cb;
}

Result<std::vector<std::uint8_t>> pq_encode(const PqCodebook& cb, const Matrix& rows) {
  if (rows.cols != cb.dim || cb.ksub != 256 || cb.m == 0 ||
      cb.centroids.size() != cb.m * cb.ksub * cb.dsub) {
    return invalid_argument_error(
        fmt::format("rows of {} values for a PQ codebook of d' = {}", rows.cols, cb.dim));
  }
  std::vector<std::uint8_t> codes(rows.rows * cb.m);
  try {
    faiss::ProductQuantizer pq(cb.dim, cb.m, 8);
    pq.centroids = cb.centroids;
    pq.compute_codes(rows.data.data(), codes.data(), rows.rows);
  } catch (const faiss::FaissException& e) {
    return internal_error(fmt::format("Faiss PQ encoding failed: {}", e.what()));
  }
  return codes;
}

Result<PqArtifact> build_pq(const Matrix& x, const PqOptions& o) {
  const std::size_t m = o.m == 0 ? std::max<std::size_t>(1, x.cols / 8) : o.m;
  if (x.rows == 0 || x.cols == 0 || x.cols % m != 0) {
    return invalid_argument_error(
        fmt::format("`M` = {} subquantizers must divide the dimension d' = {}", m, x.cols));
  }
  // Seeded training sample.
  const std::size_t n_train = std::min(o.train_size, x.rows);
  const auto order = seeded_sample(x.rows, n_train, o.seed, 4);
  Matrix train;
  train.rows = n_train;
  train.cols = x.cols;
  train.data.resize(n_train * x.cols);
  for (std::size_t i = 0; i < n_train; ++i) {
    std::copy_n(x.row(order[i]), x.cols, train.data.data() + i * x.cols);
  }
  PqArtifact a;
  PRIVSEARCH_ASSIGN_OR_RETURN(a.codebook, train_pq_codebook(train, m, o.seed));
  a.count = x.rows;
  PRIVSEARCH_ASSIGN_OR_RETURN(a.codes, pq_encode(a.codebook, x));
  return a;
}

}  // namespace privsearch::index
