#include "suites/bench_pq.h"

#include <faiss/IndexPQ.h>

#include <chrono>
#include <cmath>
#include <numbers>

#include "core/csprng.h"
#include "core/elapsed.h"
#include "harness/measure.h"
#include "index/candidates/pq.h"
#include "index/candidates/pq_scan.h"
#include "index/candidates/projection.h"

namespace privsearch::tools {

namespace {

using index::Matrix;

// Clustered synthetic vectors: 256 Gaussian centres plus noise (public benchmark data).
Matrix clustered(std::size_t n, std::size_t d, Prng& prng) {
  auto gauss = [&] {
    const double u1 = (static_cast<double>(prng.next_u64() >> 11) + 1.0) * 0x1p-53;
    const double u2 = static_cast<double>(prng.next_u64() >> 11) * 0x1p-53;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  };
  std::vector<float> centres(256 * d);
  for (auto& v : centres) v = static_cast<float>(gauss());
  Matrix m;
  m.rows = n;
  m.cols = d;
  m.data.resize(n * d);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t c = prng.uniform_below(256);
    for (std::size_t j = 0; j < d; ++j) {
      m.data[i * d + j] = centres[c * d + j] + 0.5f * static_cast<float>(gauss());
    }
  }
  return m;
}

// Faiss 1.7.3 IndexPQ on the same codebook and codes (inner product): its scan time, and
// (after timing) the same top-k scores as the decoded codes and the overlap with ours.
Status compare_with_faiss(const PqBenchOptions& o, const index::PqArtifact& artifact,
                          const std::vector<float>& query, const std::vector<std::uint32_t>& top,
                          PqBenchResult& out) {
  faiss::IndexPQ faiss_index(static_cast<int>(o.dim), o.m, 8, faiss::METRIC_INNER_PRODUCT);
  faiss_index.pq.centroids = artifact.codebook.centroids;
  faiss_index.pq.sync_transposed_centroids();
  faiss_index.is_trained = true;
  faiss_index.codes = artifact.codes;
  faiss_index.ntotal = static_cast<faiss::Index::idx_t>(o.codes);
  std::vector<float> distances(o.k);
  std::vector<faiss::Index::idx_t> labels(o.k);
  out.scan_faiss = time_runs(2, o.runs, [&] {
    faiss_index.search(1, query.data(), static_cast<faiss::Index::idx_t>(o.k), distances.data(),
                       labels.data());
  });
  // Ties may order differently: compare scores, not positions.
  std::size_t agree = 0;
  for (std::size_t i = 0; i < o.k; ++i) {
    const auto v = index::pq_decode(
        artifact.codebook, artifact.codes.data() + static_cast<std::size_t>(labels[i]) * o.m);
    double s = 0;
    for (std::size_t j = 0; j < o.dim; ++j) s += v[j] * query[j];
    agree += std::fabs(s - distances[i]) < 1e-3 ? 1 : 0;
  }
  std::size_t overlap = 0;
  for (auto id : top) {
    for (auto l : labels) overlap += static_cast<faiss::Index::idx_t>(id) == l ? 1 : 0;
  }
  out.top_k_overlap_with_faiss = static_cast<double>(overlap) / static_cast<double>(o.k);
  if (agree < o.k) return internal_error("Faiss scores disagree with the decoded codes");
  return Status();
}

}  // namespace

Result<PqBenchResult> run_pq_bench(const PqBenchOptions& o) {
  PqBenchResult out;
  out.machine = machine_description();
  out.options = o;
  Prng prng = Prng::create();
  // Codebook from a (small) trained PQ; codes of 1M documents drawn uniformly: the scan cost
  // does not depend on code values, and encoding 1M x 672 vectors is not what is measured.
  const std::size_t train_n = o.train == 0 ? 20000 : o.train;
  const Matrix train = clustered(train_n, o.dim, prng);
  index::PqOptions po;
  po.m = o.m;
  po.train_size = train_n;
  const auto t0 = SteadyClock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(auto artifact, index::build_pq(train, po));
  if (o.train != 0) out.train_s = std::round(seconds_since(t0) * 100) / 100;
  out.train_vectors = train_n;
  artifact.count = o.codes;
  artifact.codes.resize(o.codes * o.m);
  prng.fill(artifact.codes);
  out.artifact_bytes = artifact.codes.size() + artifact.codebook.centroids.size() * 4;

  std::vector<float> query(o.dim);
  for (auto& v : query)
    v = static_cast<float>(static_cast<double>(prng.next_u64() >> 11) * 0x1p-53 - 0.5);
  std::vector<std::uint32_t> top;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto scanner, index::PqScanner::create(artifact));
  out.scan = time_runs(2, o.runs, [&] { top = scanner.search(query, o.k).value(); });
  out.scan_simd = scanner.uses_simd();
  std::vector<std::uint32_t> reference;
  out.scan_scalar = time_runs(1, std::max<std::size_t>(3, o.runs / 4),
                              [&] { reference = index::pq_search(artifact, query, o.k).value(); });
  if (reference != top) return internal_error("fast scan differs from the reference scan");
  PRIVSEARCH_RETURN_IF_ERROR(compare_with_faiss(o, artifact, query, top, out));
  if (o.svd_rows != 0) {
    const Matrix docs = clustered(o.svd_rows, o.svd_input, prng);
    index::SvdOptions so;
    so.sample_size = o.svd_rows;
    const auto t1 = SteadyClock::now();
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto proj,
                                index::fit_svd(docs, std::min(o.dim, o.svd_input), so));
    out.svd_fit_s = std::round(seconds_since(t1) * 100) / 100;
    out.svd_retained_variance = proj.retained_variance;
  }
  return out;
}

nlohmann::json PqBenchResult::to_json() const {
  const auto& o = options;
  nlohmann::json out;
  out["suite"] = "pq";
  out["machine"] = machine;
  out["threads"] = "scan: 1; Faiss training/encoding: library default (OpenMP)";
  out["dim"] = o.dim;
  out["m"] = o.m;
  out["codes"] = o.codes;
  out["k"] = o.k;
  if (train_s) out["train_s"] = *train_s;
  out["train_vectors"] = train_vectors;
  out["artifact_bytes_1m"] = artifact_bytes;
  put_timing(out, "scan_ms_1m", scan, 1000.0);
  out["scan_path"] = scan_simd ? "avx512vbmi" : "scalar";
  put_timing(out, "scan_ms_1m_scalar", scan_scalar, 1000.0);
  put_timing(out, "scan_ms_1m_faiss", scan_faiss, 1000.0);
  out["top_k_overlap_with_faiss"] = top_k_overlap_with_faiss;
  if (svd_fit_s) {
    out["svd_fit_s"] = *svd_fit_s;
    out["svd_rows"] = o.svd_rows;
    out["svd_retained_variance"] = *svd_retained_variance;
  }
  return out;
}

}  // namespace privsearch::tools
