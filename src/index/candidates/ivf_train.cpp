#include <faiss/Clustering.h>
#include <faiss/IndexFlat.h>
#include <faiss/impl/FaissException.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/half.h"
#include "index/candidates/ivf.h"

// Training the IVF partition: spherical k-means (one or two levels) on the route prefix of a
// sample, and the assignment of rows to their nearest lists (Faiss, BLAS inner products).
namespace privsearch::index {

namespace {

// The `k` lists maximizing <x[:r], c_l>, best first (ties: the smaller l), for every row, and
// their inner products when `scores` is given (both rows x k).
void search_lists(const std::vector<float>& centroids, std::size_t lists, std::size_t r,
                  std::size_t k, const Matrix& x, std::uint32_t* out, float* scores) {
  // Faiss's exhaustive inner-product search (BLAS) over blocks of rows; Faiss breaks ties by the
  // smaller index as well.
  faiss::IndexFlatIP flat(static_cast<faiss::Index::idx_t>(r));
  flat.add(static_cast<faiss::Index::idx_t>(lists), centroids.data());
  constexpr std::size_t kBlock = 16384;
  std::vector<float> prefix(kBlock * r);
  std::vector<float> distances(kBlock * k);
  std::vector<faiss::Index::idx_t> labels(kBlock * k);
  for (std::size_t start = 0; start < x.rows; start += kBlock) {
    const std::size_t n = std::min(kBlock, x.rows - start);
    for (std::size_t i = 0; i < n; ++i) std::copy_n(x.row(start + i), r, prefix.data() + i * r);
    flat.search(static_cast<faiss::Index::idx_t>(n), prefix.data(),
                static_cast<faiss::Index::idx_t>(k), distances.data(), labels.data());
    for (std::size_t i = 0; i < n * k; ++i) {
      out[start * k + i] = static_cast<std::uint32_t>(labels[i]);
      if (scores != nullptr) scores[start * k + i] = distances[i];
    }
  }
}

// Spherical k-means (Faiss) of `k` centroids on `n` points of r values.
std::vector<float> kmeans(const float* points, std::size_t n, std::size_t k, std::size_t r,
                          const IvfOptions& o) {
  faiss::ClusteringParameters cp;
  cp.niter = o.iterations;
  cp.spherical = true;
  cp.seed = static_cast<int>(o.seed & 0x7fffffff);
  cp.max_points_per_centroid = std::max<int>(256, static_cast<int>(n / k + 1));
  cp.min_points_per_centroid = 1;
  cp.verbose = false;
  faiss::Clustering clustering(static_cast<int>(r), static_cast<int>(k), cp);
  faiss::IndexFlatIP index(static_cast<faiss::Index::idx_t>(r));
  clustering.train(static_cast<faiss::Index::idx_t>(n), points, index);
  return clustering.centroids;
}

// Two-level k-means for many lists: sqrt(lists) coarse clusters, then each coarse cluster's
// points split into lists in proportion to its share of the sample (largest remainders), so the
// cost is ~2 sqrt(lists) distance computations per point and iteration instead of `lists`.
std::vector<float> two_level_kmeans(const Matrix& points, std::size_t lists, const IvfOptions& o) {
  const std::size_t n = points.rows, r = points.cols;
  const std::vector<float>& train = points.data;
  const auto coarse = static_cast<std::size_t>(std::lround(std::sqrt(static_cast<double>(lists))));
  const auto top = kmeans(train.data(), n, coarse, r, o);
  std::vector<std::uint32_t> of_point(n);
  search_lists(top, coarse, r, 1, points, of_point.data(), nullptr);
  std::vector<std::vector<std::size_t>> members(coarse);
  for (std::size_t i = 0; i < n; ++i) members[of_point[i]].push_back(i);
  // Lists per coarse cluster: floor of its share, then one more to the largest remainders; at
  // most one list per point, so a cluster never gets more lists than points.
  std::vector<std::size_t> share(coarse);
  std::vector<std::pair<double, std::size_t>> remainders;
  std::size_t given = 0;
  for (std::size_t c = 0; c < coarse; ++c) {
    const double exact = static_cast<double>(lists) * static_cast<double>(members[c].size()) /
                         static_cast<double>(n);
    share[c] = std::min(members[c].size(), static_cast<std::size_t>(exact));
    given += share[c];
    remainders.push_back({exact - static_cast<double>(share[c]), c});
  }
  std::sort(remainders.begin(), remainders.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  for (std::size_t i = 0; given < lists; i = (i + 1) % coarse) {
    const auto c = remainders[i].second;
    if (share[c] < members[c].size()) {
      ++share[c];
      ++given;
    }
  }
  std::vector<float> centroids;
  centroids.reserve(lists * r);
  std::vector<float> sub;
  for (std::size_t c = 0; c < coarse; ++c) {
    if (share[c] == 0) continue;
    sub.resize(members[c].size() * r);
    for (std::size_t i = 0; i < members[c].size(); ++i) {
      std::copy_n(train.data() + members[c][i] * r, r, sub.data() + i * r);
    }
    const auto part = share[c] == 1 && members[c].size() == 1
                          ? sub
                          : kmeans(sub.data(), members[c].size(), share[c], r, o);
    centroids.insert(centroids.end(), part.begin(), part.end());
  }
  return centroids;
}

}  // namespace

std::size_t default_ivf_lists(std::uint64_t documents) {
  const auto lists = (documents + kIvfDocumentsPerList / 2) / kIvfDocumentsPerList;
  return static_cast<std::size_t>(
      std::clamp<std::uint64_t>(lists, 1, std::max<std::uint64_t>(documents, 1)));
}

float round_to_half(float v) { return half_bits_to_float(float_to_half_bits(v)); }

Result<std::vector<float>> train_ivf_centroids(const Matrix& sample, std::size_t lists,
                                               std::size_t r, const IvfOptions& o) {
  if (sample.rows < lists || r == 0 || r > sample.cols) {
    return invalid_argument_error(fmt::format(
        "IVF training needs at least one of {} sample rows per list ({} lists) and r <= d'",
        sample.rows, lists));
  }
  // The first r coordinates of every row, contiguous (the sample itself when it has r columns).
  Matrix prefix;
  if (sample.cols != r) {
    prefix.rows = sample.rows;
    prefix.cols = r;
    prefix.data.resize(sample.rows * r);
    for (std::size_t i = 0; i < sample.rows; ++i) {
      std::copy_n(sample.row(i), r, prefix.data.data() + i * r);
    }
  }
  const Matrix& points = sample.cols == r ? sample : prefix;
  std::vector<float> centroids;
  try {
    centroids = lists >= kTwoLevelMinLists ? two_level_kmeans(points, lists, o)
                                           : kmeans(points.data.data(), points.rows, lists, r, o);
  } catch (const faiss::FaissException& e) {
    return internal_error(fmt::format("Faiss k-means failed: {}", e.what()));
  }
  // What the file keeps is what both sides route with.
  for (auto& c : centroids) c = round_to_half(c);
  return centroids;
}

Result<std::vector<std::uint32_t>> assign_to_lists(const std::vector<float>& centroids,
                                                   std::size_t r, std::size_t spill,
                                                   const Matrix& rows) {
  const std::size_t lists = r == 0 ? 0 : centroids.size() / r;
  if (r == 0 || lists == 0 || lists * r != centroids.size() || r > rows.cols || spill < 1 ||
      spill > lists) {
    return invalid_argument_error("list assignment: centroids, r and spill do not fit");
  }
  std::vector<std::uint32_t> out(rows.rows * spill);
  try {
    search_lists(centroids, lists, r, spill, rows, out.data(), nullptr);
  } catch (const faiss::FaissException& e) {
    return internal_error(fmt::format("Faiss list assignment failed: {}", e.what()));
  }
  return out;
}

Result<ListChoices> list_choices(const std::vector<float>& centroids, std::size_t r,
                                 std::size_t choices, const Matrix& rows) {
  const std::size_t lists = r == 0 ? 0 : centroids.size() / r;
  if (r == 0 || lists == 0 || lists * r != centroids.size() || r > rows.cols || choices < 1 ||
      choices > lists) {
    return invalid_argument_error("list choices: centroids, r and choices do not fit");
  }
  ListChoices c;
  c.rows = rows.rows;
  c.choices = choices;
  c.lists.resize(rows.rows * choices);
  c.scores.resize(rows.rows * choices);
  try {
    search_lists(centroids, lists, r, choices, rows, c.lists.data(), c.scores.data());
  } catch (const faiss::FaissException& e) {
    return internal_error(fmt::format("Faiss list assignment failed: {}", e.what()));
  }
  return c;
}

}  // namespace privsearch::index
