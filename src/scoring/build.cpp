#include "scoring/build.h"

#include <faiss/Clustering.h>
#include <faiss/IndexFlat.h>
#include <faiss/impl/FaissException.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "pir/lwe/lwe64.h"

namespace privsearch::scoring {
namespace {

constexpr std::size_t kChoices = 8;
using idx_t = faiss::Index::idx_t;

Result<std::vector<float>> kmeans(const std::vector<float>& x, std::size_t n, std::size_t dim,
                                  std::size_t k, std::uint64_t seed) {
  try {
    faiss::ClusteringParameters cp;
    cp.niter = 20;
    cp.seed = static_cast<int>(seed & 0x7fffffff);
    cp.max_points_per_centroid = 256;
    cp.min_points_per_centroid = 1;  // only Faiss's "please provide more points" warning
    cp.verbose = false;
    faiss::Clustering clus(static_cast<int>(dim), static_cast<int>(k), cp);
    faiss::IndexFlatL2 index(static_cast<idx_t>(dim));
    clus.train(static_cast<idx_t>(n), x.data(), index);
    return clus.centroids;
  } catch (const faiss::FaissException& e) {
    return internal_error(fmt::format("Faiss k-means failed: {}", e.what()));
  }
}

// slot_doc (clusters x rows) from the balanced assignment described in build.h.
// Spill-over: the nearest centroid to `point` that still has room (-1 when none has).
std::int64_t nearest_with_room(const float* point, std::size_t dim,
                               const std::vector<float>& centroids,
                               const std::vector<std::uint32_t>& fill, std::size_t rows) {
  std::int64_t chosen = -1;
  float best = INFINITY;
  for (std::size_t c = 0; c < fill.size(); ++c) {
    if (fill[c] >= rows) continue;
    float d2 = 0;
    for (std::size_t j = 0; j < dim; ++j) {
      const float diff = point[j] - centroids[c * dim + j];
      d2 += diff * diff;
    }
    if (d2 < best) {
      best = d2;
      chosen = static_cast<std::int64_t>(c);
    }
  }
  return chosen;
}

// Overlap (Tiptoe's boundary copies): the documents closest to a second centroid, by the gap
// between their nearest and next-nearest centroid, get a copy in that cluster while it has
// room, up to overlap * n copies (counted into `fill`). Per document: the copy's cluster, or
// kEmptySlot.
std::vector<std::uint32_t> boundary_copies(const std::vector<float>& dist,
                                           const std::vector<idx_t>& label, std::size_t t,
                                           const std::vector<std::uint32_t>& cluster_of,
                                           std::size_t clusters, std::size_t rows, double overlap,
                                           std::vector<std::uint32_t>& fill) {
  const std::size_t n = cluster_of.size();
  std::vector<std::uint32_t> wanted(n, kEmptySlot);
  const auto budget = static_cast<std::size_t>(overlap * static_cast<double>(n));
  if (budget == 0 || t < 2) return wanted;
  std::vector<std::uint32_t> second(n, kEmptySlot);
  std::vector<std::pair<float, std::uint32_t>> gaps;
  for (std::uint32_t doc = 0; doc < n; ++doc) {
    for (std::size_t j = 0; j < t; ++j) {
      const auto c = static_cast<std::uint32_t>(label[doc * t + j]);
      if (c < clusters && c != cluster_of[doc]) {
        gaps.emplace_back(dist[doc * t + j] - dist[doc * t], doc);
        second[doc] = c;
        break;
      }
    }
  }
  std::sort(gaps.begin(), gaps.end());
  std::size_t copies = 0;
  for (const auto& [gap, doc] : gaps) {
    if (copies == budget) break;
    const std::uint32_t c = second[doc];
    if (fill[c] >= rows) continue;
    ++fill[c];
    wanted[doc] = c;
    ++copies;
  }
  return wanted;
}

Result<std::vector<std::uint32_t>> assign_balanced(const std::vector<float>& x, std::size_t n,
                                                   std::size_t dim,
                                                   const std::vector<float>& centroids,
                                                   std::size_t clusters, std::size_t rows,
                                                   double overlap) {
  const std::size_t t = std::min(kChoices, clusters);
  std::vector<float> dist(n * t);
  std::vector<idx_t> label(n * t);
  try {
    faiss::IndexFlatL2 index(static_cast<idx_t>(dim));
    index.add(static_cast<idx_t>(clusters), centroids.data());
    index.search(static_cast<idx_t>(n), x.data(), static_cast<idx_t>(t), dist.data(), label.data());
  } catch (const faiss::FaissException& e) {
    return internal_error(fmt::format("Faiss search failed: {}", e.what()));
  }
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return dist[a * t] < dist[b * t]; });
  std::vector<std::uint32_t> fill(clusters, 0);
  std::vector<std::uint32_t> cluster_of(n);
  for (std::uint32_t doc : order) {
    std::int64_t chosen = -1;
    for (std::size_t j = 0; j < t && chosen < 0; ++j) {
      const auto c = static_cast<std::size_t>(label[doc * t + j]);
      if (c < clusters && fill[c] < rows) chosen = static_cast<std::int64_t>(c);
    }
    if (chosen < 0) chosen = nearest_with_room(&x[doc * dim], dim, centroids, fill, rows);
    if (chosen < 0) return internal_error("balanced assignment ran out of slots");
    cluster_of[doc] = static_cast<std::uint32_t>(chosen);
    ++fill[static_cast<std::size_t>(chosen)];
  }
  const auto copy_of = boundary_copies(dist, label, t, cluster_of, clusters, rows, overlap, fill);
  std::vector<std::uint32_t> slot_doc(clusters * rows, kEmptySlot);
  std::fill(fill.begin(), fill.end(), 0u);
  for (std::uint32_t doc = 0; doc < n; ++doc) {  // slots in document order
    for (const std::uint32_t c : {cluster_of[doc], copy_of[doc]}) {
      if (c != kEmptySlot) slot_doc[std::size_t{c} * rows + fill[c]++] = doc;
    }
  }
  return slot_doc;
}

double percentile_abs(const std::vector<float>& x, double q, std::uint64_t seed) {
  constexpr std::size_t kSample = 1'000'000;
  std::vector<float> a;
  if (x.size() <= kSample) {
    a.resize(x.size());
    std::transform(x.begin(), x.end(), a.begin(), [](float v) { return std::fabs(v); });
  } else {
    Seed s{};
    for (int i = 0; i < 8; ++i)
      s[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(seed >> (8 * i));
    Prng prng = Prng::from_seed(s, 0x5343);  // "SC"
    a.resize(kSample);
    for (auto& v : a) v = std::fabs(x[prng.uniform_below(x.size())]);
  }
  const auto k =
      std::min(a.size() - 1, static_cast<std::size_t>(q * static_cast<double>(a.size())));
  std::nth_element(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(k), a.end());
  return a[k];
}

}  // namespace

std::uint32_t default_cluster_rows(std::uint64_t documents) {
  const double r = 4.0 * std::sqrt(static_cast<double>(documents));
  const auto rounded = static_cast<std::uint32_t>(std::ceil(r / 64.0) * 64.0);
  return std::clamp<std::uint32_t>(rounded, 64, 4096);
}

namespace {
// The balanced clusters on the first centroid_dim coordinates: centroids and the slot map.
Status cluster_documents(ScoringLayout& l, const std::vector<float>& x, std::size_t n,
                         const ScoringBuildOptions& o,
                         const std::function<void(const std::string&)>& say) {
  const ScoringShape& s = l.shape;
  std::vector<float> xc(n * l.centroid_dim);
  for (std::size_t i = 0; i < n; ++i) {
    std::copy_n(x.data() + i * s.dim, l.centroid_dim, xc.data() + i * l.centroid_dim);
  }
  say(fmt::format("scoring: k-means into {} clusters of {} slots (on {} of {} dimensions)",
                  s.clusters, s.cluster_rows, l.centroid_dim, s.dim));
  PRIVSEARCH_ASSIGN_OR_RETURN(l.centroids, kmeans(xc, n, l.centroid_dim, s.clusters, o.seed));
  say("scoring: balanced assignment");
  PRIVSEARCH_ASSIGN_OR_RETURN(l.slot_doc, assign_balanced(xc, n, l.centroid_dim, l.centroids,
                                                          s.clusters, s.cluster_rows, o.overlap));
  return Status();
}

// D's blocks: every slot's document quantized to doc_bits (offset to [0, 2^b)), an empty slot
// all zeros (score 0); records the largest squared norm of a quantized document.
void fill_documents(ScoringLayout& l, const std::vector<float>& x, ScoringMatrix& m) {
  const ScoringShape& s = l.shape;
  m.rows = s.cluster_rows;
  m.columns = s.columns();
  m.stride = s.stride();
  m.query_drop_bits = l.query_drop_bits;
  m.answer_bits = s.answer_bits;
  m.data.assign(std::size_t{m.rows} * m.stride, 0);
  for (std::size_t c = 0; c < s.clusters; ++c) {
    for (std::size_t r = 0; r < s.cluster_rows; ++r) {
      const std::uint32_t doc = l.doc_at(c, r);
      std::uint8_t* dst = m.data.data() + r * m.stride + c * s.dim;
      std::uint64_t norm_sq = 0;
      for (std::size_t j = 0; j < s.dim; ++j) {
        std::int32_t q = 0;  // an empty slot scores 0
        if (doc != kEmptySlot) {
          q = static_cast<std::int32_t>(std::lround(x[doc * s.dim + j] * l.doc_scale));
          q = std::clamp(q, -s.doc_offset(), s.doc_offset() - 1);
        }
        dst[j] = static_cast<std::uint8_t>(q + s.doc_offset());
        norm_sq += static_cast<std::uint64_t>(std::int64_t{q} * q);
      }
      l.max_norm_sq = std::max(l.max_norm_sq, norm_sq);
    }
  }
}

// The padding columns (layout.h, kMinSecretColumns): uniform entries of doc_bits bits from the
// CSPRNG, private like the rest of D; queries leave them at zero.
void fill_padding(ScoringMatrix& m, const ScoringShape& s, Prng& rng) {
  if (s.pad_columns == 0) return;
  std::vector<std::uint8_t> random(s.pad_columns);
  const auto mask = static_cast<std::uint8_t>((1u << s.doc_bits) - 1);
  for (std::size_t r = 0; r < m.rows; ++r) {
    rng.fill(random);
    std::uint8_t* dst = m.data.data() + r * m.stride + s.block_columns();
    for (std::size_t j = 0; j < s.pad_columns; ++j) dst[j] = random[j] & mask;
  }
}
}  // namespace

Result<ScoringArtifacts> build_scoring(const index::Matrix& projected, const ScoringBuildOptions& o,
                                       const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& s) {
    if (progress) progress(s);
  };
  const std::size_t n = projected.rows;
  if (n == 0) return invalid_argument_error("no documents to build the scoring database from");
  if (!(o.fill > 0.1 && o.fill <= 1.0)) {
    return invalid_argument_error(fmt::format("scoring fill {} outside (0.1, 1]", o.fill));
  }
  if (!(o.overlap >= 0.0 && o.overlap <= 1.0)) {
    return invalid_argument_error(fmt::format("scoring overlap {} outside [0, 1]", o.overlap));
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto lwe,
                              pir::find_lwe64_params(o.lwe_params, o.allow_insecure));
  ScoringArtifacts out;
  ScoringLayout& l = out.layout;
  ScoringShape& s = l.shape;
  s.documents = n;
  s.dim = static_cast<std::uint32_t>(std::min<std::size_t>(o.dim, projected.cols));
  s.doc_bits = o.doc_bits;
  s.query_bits = o.query_bits;
  s.cluster_rows = o.cluster_rows != 0 ? o.cluster_rows : default_cluster_rows(n);
  s.clusters = static_cast<std::uint32_t>(
      std::ceil(static_cast<double>(n) / (o.fill * static_cast<double>(s.cluster_rows))));
  s.clusters = std::max<std::uint32_t>(
      s.clusters, static_cast<std::uint32_t>((n + s.cluster_rows - 1) / s.cluster_rows));
  s.pad_columns = pad_columns_for(s.block_columns());  // kMinSecretColumns (layout.h)
  const bool bits_ok =
      o.doc_bits >= 2 && o.doc_bits <= 8 && o.query_bits >= 2 && o.query_bits <= 16;
  const std::uint32_t worst = bits_ok ? plaintext_bits_for(s.dim, s.doc_bits, s.query_bits) : 0;
  s.log_p = o.score_bits != 0 ? o.score_bits : std::min(worst, kDefaultScoreBits);
  s.answer_bits = s.log_p + 1;
  PRIVSEARCH_RETURN_IF_ERROR(validate_shape(s));
  // The widest query modulus switch that still decodes (16 bits: a quarter less work and
  // request; the rounding error grows with the columns), then the narrowest answer.
  out.decoding_failure_log2 = 0;
  for (const std::uint32_t drop : {16u, 8u, 0u}) {
    for (std::uint32_t bits = s.log_p + 1; bits <= 32; ++bits) {
      out.decoding_failure_log2 = pir::lwe64_decoding_failure_log2(
          lwe, s.columns(), (1u << s.doc_bits) - 1, static_cast<int>(s.log_p),
          static_cast<int>(drop), static_cast<int>(bits));
      l.query_drop_bits = drop;
      s.answer_bits = bits;
      if (out.decoding_failure_log2 <= -40) break;
    }
    if (out.decoding_failure_log2 <= -40) break;
  }
  if (out.decoding_failure_log2 > -40) {
    return invalid_argument_error(fmt::format(
        "scoring parameters decode with failure probability 2^{:.1f} per score (need <= 2^-40)",
        out.decoding_failure_log2));
  }
  l.lwe_params = std::string(lwe.name);
  // Random per index (not from the build seed: every default build would share one A).
  Prng secret_rng = Prng::create();
  secret_rng.fill(l.matrix_salt);
  l.matrix_seed = derive_matrix_seed(l.matrix_salt);

  std::vector<float> x(n * s.dim);
  for (std::size_t i = 0; i < n; ++i) {
    std::copy_n(projected.row(i), s.dim, x.data() + i * s.dim);
  }
  l.centroid_dim = std::min(s.dim, std::max<std::uint32_t>(1, o.cluster_dim));
  PRIVSEARCH_RETURN_IF_ERROR(cluster_documents(l, x, n, o, say));
  const double p999 = percentile_abs(x, 0.999, o.seed);
  const std::int32_t top = s.doc_offset() - 1;
  l.doc_scale = p999 > 0 ? top / p999 : 1.0;

  ScoringMatrix& m = out.matrix;
  fill_documents(l, x, m);
  fill_padding(m, s, secret_rng);
  say(fmt::format("scoring: hint ({} x {} LWE products over {} columns)", m.rows, lwe.n,
                  m.columns));
  out.hint.rows = m.rows;
  out.hint.n = lwe.n;
  out.hint.values = pir::compute_lwe64_hint(m.data.data(), m.rows, m.columns, m.stride,
                                            l.matrix_seed, lwe.n, o.threads);
  return out;
}

Status save_scoring(const std::filesystem::path& dir, const ScoringArtifacts& a) {
  PRIVSEARCH_RETURN_IF_ERROR(save_layout(dir / kLayoutFile, a.layout));
  PRIVSEARCH_RETURN_IF_ERROR(save_matrix(dir / kMatrixFile, a.matrix));
  return save_hint(dir / kHintFile, a.hint);
}

Result<ScoringArtifacts> load_scoring(const std::filesystem::path& dir) {
  ScoringArtifacts a;
  PRIVSEARCH_ASSIGN_OR_RETURN(a.layout, load_layout(dir / kLayoutFile));
  PRIVSEARCH_ASSIGN_OR_RETURN(a.matrix, load_matrix(dir / kMatrixFile));
  PRIVSEARCH_ASSIGN_OR_RETURN(a.hint, load_hint(dir / kHintFile));
  return a;
}

index::ExtraArtifacts scoring_artifacts_for_build(const ScoringBuildOptions& options) {
  return [options](const index::Matrix& projected, const std::filesystem::path& out,
                   const index::Progress& progress) -> Result<std::vector<index::ArtifactEntry>> {
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto a, build_scoring(projected, options, progress));
    PRIVSEARCH_RETURN_IF_ERROR(save_scoring(out, a));
    return std::vector<index::ArtifactEntry>{{kLayoutArtifact, kLayoutFile, 0, ""},
                                             {kMatrixArtifact, kMatrixFile, 0, ""},
                                             {kHintArtifact, kHintFile, 0, ""}};
  };
}

}  // namespace privsearch::scoring
