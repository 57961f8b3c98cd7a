#include "index/candidates/pq.h"

#include <faiss/impl/FaissException.h>
#include <faiss/impl/ProductQuantizer.h>
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "core/csprng.h"

namespace privsearch::index {

Result<PqCodebook> train_pq_codebook(const Matrix& sample, std::size_t m, std::uint64_t seed) {
  if (sample.cols == 0 || m == 0 || sample.cols % m != 0) {
    return invalid_argument_error(
        fmt::format("`M` = {} subquantizers must divide the dimension d' = {}", m, sample.cols));
  }
  if (sample.rows < 256) {
    return invalid_argument_error(
        fmt::format("{} training vectors; PQ with 8 bits needs at least 256", sample.rows));
  }
  try {
    faiss::ProductQuantizer pq(sample.cols, m, 8);
    pq.cp.seed = static_cast<int>(seed & 0x7fffffff);
    pq.verbose = false;
    pq.train(sample.rows, sample.data.data());
    PqCodebook cb;
    cb.dim = sample.cols;
    cb.m = m;
    cb.ksub = pq.ksub;
    cb.dsub = pq.dsub;
    cb.centroids = pq.centroids;
    return cb;
  } catch (const faiss::FaissException& e) {
    return internal_error(fmt::format("Faiss PQ training failed: {}", e.what()));
  }
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
