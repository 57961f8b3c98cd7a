#include "index/ivf.h"

#include <faiss/Clustering.h>
#include <faiss/IndexFlat.h>
#include <faiss/impl/FaissException.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "core/bytes.h"
#include "core/half.h"
#include "index/artifacts.h"
#include "index/atomic_file.h"
#include "index/route_kernel.h"

namespace privsearch::index {

namespace {

constexpr std::size_t kMaxLists = 1u << 22;
constexpr std::size_t kDirectoryEntryBytes = 8 + 8 + 4 + 32;
constexpr char kSegmentMagic[4] = {'P', 'S', 'L', 'S'};

std::size_t blocked_bytes(std::size_t count, std::size_t m) { return ((count + 63) / 64) * m * 64; }

std::size_t segment_bytes(std::size_t count, std::size_t m) {
  return kListSegmentHeaderBytes + count * 4 + blocked_bytes(count, m);
}

// The `spill` lists maximizing <x[:r], c_l>, best first (ties: the smaller l), for every row.
std::vector<std::uint32_t> assign(const std::vector<float>& centroids, std::size_t lists,
                                  std::size_t r, std::size_t spill, const Matrix& x) {
  std::vector<std::uint32_t> out(x.rows * spill);
  // Faiss's exhaustive inner-product search (BLAS) over blocks of rows; Faiss breaks ties by the
  // smaller index as well.
  faiss::IndexFlatIP flat(static_cast<faiss::Index::idx_t>(r));
  flat.add(static_cast<faiss::Index::idx_t>(lists), centroids.data());
  constexpr std::size_t kBlock = 16384;
  std::vector<float> prefix(kBlock * r);
  std::vector<float> distances(kBlock * spill);
  std::vector<faiss::Index::idx_t> labels(kBlock * spill);
  for (std::size_t start = 0; start < x.rows; start += kBlock) {
    const std::size_t n = std::min(kBlock, x.rows - start);
    for (std::size_t i = 0; i < n; ++i) std::copy_n(x.row(start + i), r, prefix.data() + i * r);
    flat.search(static_cast<faiss::Index::idx_t>(n), prefix.data(),
                static_cast<faiss::Index::idx_t>(spill), distances.data(), labels.data());
    for (std::size_t i = 0; i < n * spill; ++i) {
      out[start * spill + i] = static_cast<std::uint32_t>(labels[i]);
    }
  }
  return out;
}

// The header of a lists file (ivf_lists.bin and every generation's ivf_lists.g.bin).
void put_lists_header(ByteWriter& w, std::size_t lists) {
  w.put_bytes({reinterpret_cast<const std::uint8_t*>("PSIL"), 4});
  w.put_u16(1);
  w.put_u16(0);
  w.put_u64(lists);
}

// `pq` holds the codes of documents first_id, first_id + 1, ...
void put_segment(ByteWriter& w, std::uint32_t list, std::span<const std::uint32_t> ids,
                 const PqArtifact& pq, std::uint64_t first_id = 0) {
  const std::size_t m = pq.codebook.m;
  w.put_bytes({reinterpret_cast<const std::uint8_t*>(kSegmentMagic), 4});
  w.put_u16(1);
  w.put_u16(0);
  w.put_u32(list);
  w.put_u32(static_cast<std::uint32_t>(ids.size()));
  w.put_u32(static_cast<std::uint32_t>(m));
  w.put_u32(0);
  for (const auto id : ids) w.put_u32(id);
  std::vector<std::uint8_t> codes(ids.size() * m);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    std::copy_n(pq.codes.data() + (ids[i] - first_id) * m, m, codes.data() + i * m);
  }
  w.put_bytes(block_codes(codes.data(), ids.size(), m));
}

}  // namespace

std::size_t default_ivf_lists(std::uint64_t documents) {
  const auto lists = (documents + kIvfDocumentsPerList / 2) / kIvfDocumentsPerList;
  return static_cast<std::size_t>(std::clamp<std::uint64_t>(lists, 1, std::max<std::uint64_t>(documents, 1)));
}

float round_to_half(float v) { return half_bits_to_float(float_to_half_bits(v)); }

namespace {

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
std::vector<float> two_level_kmeans(const Matrix& points, std::size_t lists,
                                    const IvfOptions& o) {
  const std::size_t n = points.rows, r = points.cols;
  const std::vector<float>& train = points.data;
  const auto coarse = static_cast<std::size_t>(std::lround(std::sqrt(static_cast<double>(lists))));
  const auto top = kmeans(train.data(), n, coarse, r, o);
  const auto of_point = assign(top, coarse, r, 1, points);
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
  std::sort(remainders.begin(), remainders.end(),
            [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
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

Status check_ivf_shape(std::size_t rows, std::size_t cols, std::size_t lists, std::size_t r,
                       std::size_t spill) {
  if (lists == 0 || lists > rows || lists > kMaxLists) {
    return invalid_argument_error(fmt::format(
        "{} IVF lists for {} documents; at most one list per document (and {})", lists, rows,
        kMaxLists));
  }
  if (spill < 1 || spill > kMaxSpill || spill > lists) {
    return invalid_argument_error(fmt::format(
        "each document in {} lists; between 1 and {} (and at most the {} lists)", spill,
        kMaxSpill, lists));
  }
  if (r == 0 || r > cols) {
    return invalid_argument_error(fmt::format("IVF route dimension {} outside [1, d' = {}]", r, cols));
  }
  if (rows > std::numeric_limits<std::uint32_t>::max()) {
    return invalid_argument_error("the IVF lists hold 32-bit document ids");
  }
  return Status();
}

}  // namespace

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
  try {
    return assign(centroids, lists, r, spill, rows);
  } catch (const faiss::FaissException& e) {
    return internal_error(fmt::format("Faiss list assignment failed: {}", e.what()));
  }
}

Result<std::vector<ArtifactEntry>> write_ivf(const std::vector<float>& centroids, std::size_t r,
                                             std::size_t spill,
                                             std::span<const std::uint32_t> assignment,
                                             const PqArtifact& codes,
                                             const std::filesystem::path& dir) {
  const std::size_t lists = r == 0 ? 0 : centroids.size() / r;
  PRIVSEARCH_RETURN_IF_ERROR(check_ivf_shape(codes.count, codes.codebook.dim, lists, r, spill));
  if (assignment.size() != codes.count * spill) {
    return invalid_argument_error("the list assignment does not cover the PQ codes' rows");
  }
  std::vector<std::uint32_t> sizes(lists, 0);
  for (const auto l : assignment) {
    if (l >= lists) return invalid_argument_error(fmt::format("assignment to list {} of {}", l, lists));
    ++sizes[l];
  }
  std::vector<std::vector<std::uint32_t>> members(lists);
  for (std::size_t l = 0; l < lists; ++l) members[l].reserve(sizes[l]);
  for (std::size_t d = 0; d < codes.count; ++d) {
    for (std::size_t s = 0; s < spill; ++s) {
      members[assignment[d * spill + s]].push_back(static_cast<std::uint32_t>(d));
    }
  }

  IvfIndex ivf;
  ivf.documents = codes.count;
  ivf.spill = spill;
  ivf.lists = lists;
  ivf.route_dim = r;
  ivf.codebook = codes.codebook;
  ivf.centroids = centroids;
  ivf.centroid_halves.reserve(centroids.size());
  for (const float c : centroids) ivf.centroid_halves.push_back(float_to_half_bits(c));
  ivf.directory.resize(lists);
  ByteWriter lw;
  put_lists_header(lw, lists);
  for (std::size_t l = 0; l < lists; ++l) {
    const std::size_t start = lw.size();
    put_segment(lw, static_cast<std::uint32_t>(l), members[l], codes);
    std::vector<std::uint32_t>().swap(members[l]);
    auto& ref = ivf.directory[l];
    ref.offset = start;
    ref.bytes = lw.size() - start;
    ref.count = sizes[l];
    ref.sha256 = sha256(std::span(lw.bytes()).subspan(start, ref.bytes));
  }
  ivf.lists_file_bytes = lw.size();
  PRIVSEARCH_RETURN_IF_ERROR(write_bytes_atomically(dir / kIvfListsFile, lw.bytes()));

  ByteWriter w;
  put_header(w, "PSIV");
  w.put_u64(ivf.documents);
  w.put_u32(static_cast<std::uint32_t>(lists));
  w.put_u32(static_cast<std::uint32_t>(codes.codebook.dim));
  w.put_u32(static_cast<std::uint32_t>(r));
  w.put_u32(static_cast<std::uint32_t>(codes.codebook.m));
  w.put_u32(static_cast<std::uint32_t>(ivf.spill));
  w.put_u32(0);
  w.put_u64(ivf.lists_file_bytes);
  put_floats(w, ivf.codebook.centroids);
  for (const float c : ivf.centroids) w.put_u16(float_to_half_bits(c));
  for (const auto& ref : ivf.directory) {
    w.put_u64(ref.offset);
    w.put_u64(ref.bytes);
    w.put_u32(ref.count);
    w.put_bytes(ref.sha256);
  }
  PRIVSEARCH_RETURN_IF_ERROR(write_bytes_atomically(dir / kIvfFile, w.bytes()));
  return std::vector<ArtifactEntry>{{kIvfListsArtifact, kIvfListsFile, 0, ""},
                                    {kIvfArtifact, kIvfFile, 0, ""}};
}

Result<std::vector<ArtifactEntry>> write_ivf_delta(const IvfIndex& base, std::uint32_t generation,
                                                   std::span<const std::uint32_t> assignment,
                                                   const PqArtifact& codes,
                                                   const std::filesystem::path& dir) {
  const std::size_t lists = base.lists, m = base.codebook.m, spill = base.spill;
  if (generation != base.deltas.size() + 1) {
    return failed_precondition_error(fmt::format(
        "IVF generation {} written after {} generations", generation, base.deltas.size()));
  }
  if (codes.codebook.m != m || codes.codebook.dim != base.codebook.dim ||
      assignment.size() != codes.count * spill) {
    return invalid_argument_error("the appended documents' codes or list assignment do not fit "
                                  "the IVF index (codebook shape, spill)");
  }
  const std::uint64_t first = base.total_documents();
  if (first + codes.count > std::numeric_limits<std::uint32_t>::max()) {
    return invalid_argument_error("document ids above 2^32 - 1");
  }
  std::vector<std::vector<std::uint32_t>> members(lists);
  for (std::size_t d = 0; d < codes.count; ++d) {
    for (std::size_t j = 0; j < spill; ++j) {
      const auto l = assignment[d * spill + j];
      if (l >= lists) return invalid_argument_error(fmt::format("assignment to list {} of {}", l, lists));
      members[l].push_back(static_cast<std::uint32_t>(first + d));  // ascending: d ascends
    }
  }
  ByteWriter lw;
  put_lists_header(lw, lists);
  ByteWriter entries;
  std::uint32_t changed = 0;
  for (std::size_t l = 0; l < lists; ++l) {
    if (members[l].empty()) continue;
    const std::size_t start = lw.size();
    put_segment(lw, static_cast<std::uint32_t>(l), members[l], codes, first);
    entries.put_u32(static_cast<std::uint32_t>(l));
    entries.put_u32(static_cast<std::uint32_t>(members[l].size()));
    entries.put_u64(start);
    entries.put_u64(lw.size() - start);
    entries.put_bytes(sha256(std::span(lw.bytes()).subspan(start, lw.size() - start)));
    ++changed;
  }
  const std::string lists_file = fmt::format("ivf_lists.{}.bin", generation);
  const std::string delta_file = fmt::format("ivf_delta.{}.bin", generation);
  PRIVSEARCH_RETURN_IF_ERROR(write_bytes_atomically(dir / lists_file, lw.bytes()));
  ByteWriter w;
  put_header(w, "PSID");
  w.put_u32(generation);
  w.put_u32(static_cast<std::uint32_t>(lists));
  w.put_u32(static_cast<std::uint32_t>(m));
  w.put_u32(changed);
  w.put_u64(first);
  w.put_u64(first + codes.count);
  w.put_u64(lw.size());
  w.put_bytes(entries.bytes());
  PRIVSEARCH_RETURN_IF_ERROR(write_bytes_atomically(dir / delta_file, w.bytes()));
  return std::vector<ArtifactEntry>{
      {generation_artifact(kIvfListsArtifact, generation), lists_file, 0, ""},
      {generation_artifact(kIvfDeltaArtifact, generation), delta_file, 0, ""}};
}

Status add_ivf_delta(IvfIndex& ivf, std::span<const std::uint8_t> bytes,
                     const std::filesystem::path& file) {
  ByteReader r(bytes);
  PRIVSEARCH_RETURN_IF_ERROR(read_header(r, "PSID", file));
  std::uint32_t generation = 0, lists = 0, m = 0, changed = 0;
  IvfDelta delta;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(generation));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(lists));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(m));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(changed));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(delta.first_document));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(delta.documents));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(delta.lists_file_bytes));
  if (generation != ivf.deltas.size() + 1 || lists != ivf.lists || m != ivf.codebook.m ||
      delta.first_document != ivf.total_documents() || delta.documents < delta.first_document ||
      delta.documents > std::numeric_limits<std::uint32_t>::max() || changed > lists) {
    return data_loss_error(fmt::format(
        "`{}`: IVF delta (generation {}, {} lists, M = {}, documents {}..{}) is not the next "
        "generation of this index (generation {}, {} lists, M = {}, {} documents)",
        file.string(), generation, lists, m, delta.first_document, delta.documents,
        ivf.deltas.size() + 1, ivf.lists, ivf.codebook.m, ivf.total_documents()));
  }
  if (r.remaining() != std::size_t{changed} * (kDirectoryEntryBytes + 4)) {
    return data_loss_error(fmt::format("`{}`: {} bytes of entries, {} lists take {}", file.string(),
                                       r.remaining(), changed, changed * (kDirectoryEntryBytes + 4)));
  }
  delta.directory.resize(lists);
  std::uint64_t next = kListsFileHeaderBytes, total = 0;
  std::int64_t previous = -1;
  for (std::uint32_t e = 0; e < changed; ++e) {
    std::uint32_t list = 0;
    PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(list));
    if (list >= lists || static_cast<std::int64_t>(list) <= previous) {
      return data_loss_error(fmt::format("`{}`: delta lists not ascending inside the index", file.string()));
    }
    previous = list;
    auto& ref = delta.directory[list];
    PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(ref.count));
    PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(ref.offset));
    PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(ref.bytes));
    PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(ref.sha256));
    if (ref.count == 0 || ref.offset != next || ref.bytes != segment_bytes(ref.count, m)) {
      return data_loss_error(fmt::format("`{}`: list {}'s delta segment does not follow the "
                                         "previous one or disagrees with its count",
                                         file.string(), list));
    }
    next += ref.bytes;
    total += ref.count;
  }
  if (total != (delta.documents - delta.first_document) * ivf.spill ||
      next != delta.lists_file_bytes) {
    return data_loss_error(fmt::format("`{}`: the delta lists hold {} entries in {} bytes; the "
                                       "header says {} documents x {} in {}", file.string(), total,
                                       next, delta.documents - delta.first_document, ivf.spill,
                                       delta.lists_file_bytes));
  }
  ivf.deltas.push_back(std::move(delta));
  return Status();
}

Result<std::vector<ArtifactEntry>> build_ivf(const Matrix& x, const PqArtifact& pq,
                                             const IvfOptions& o,
                                             const std::filesystem::path& dir) {
  const std::size_t lists = o.lists != 0 ? o.lists : default_ivf_lists(x.rows);
  const std::size_t r = o.route_dim != 0 ? o.route_dim : x.cols;
  if (x.rows == 0 || pq.count != x.rows || pq.codebook.dim != x.cols) {
    return invalid_argument_error("the IVF build needs the PQ artifact of the same projected rows");
  }
  PRIVSEARCH_RETURN_IF_ERROR(check_ivf_shape(x.rows, x.cols, lists, r, o.spill));
  // The lists' codes: the flat artifact's, or a PQ of their own with fewer subquantizers (fewer
  // bytes per fetched document; the provider's exact rerank still orders the candidates).
  std::optional<PqArtifact> own;
  if (o.pq_m != 0 && o.pq_m != pq.codebook.m) {
    PqOptions po;
    po.m = o.pq_m;
    po.train_size = o.train_size;
    po.seed = o.seed;
    PRIVSEARCH_ASSIGN_OR_RETURN(own, build_pq(x, po));
  }
  const PqArtifact& codes = own ? *own : pq;
  // Seeded training sample, at least one point per list.
  const auto sample = seeded_sample(x.rows, std::max(o.train_size, lists), o.seed, 5);
  Matrix train;
  train.rows = sample.size();
  train.cols = r;
  train.data.resize(sample.size() * r);
  for (std::size_t i = 0; i < sample.size(); ++i) {
    std::copy_n(x.row(sample[i]), r, train.data.data() + i * r);
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto centroids, train_ivf_centroids(train, lists, r, o));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto of_doc, assign_to_lists(centroids, r, o.spill, x));
  return write_ivf(centroids, r, o.spill, of_doc, codes, dir);
}

Result<IvfIndex> load_ivf(const std::filesystem::path& file) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, read_file_bytes(file));
  return parse_ivf(bytes, file);
}

Result<IvfIndex> parse_ivf(std::span<const std::uint8_t> bytes, const std::filesystem::path& file) {
  ByteReader r(bytes);
  PRIVSEARCH_RETURN_IF_ERROR(read_header(r, "PSIV", file));
  IvfIndex ivf;
  std::uint32_t lists = 0, dim = 0, route = 0, m = 0, spill = 0, zero = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(ivf.documents));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(lists));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(dim));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(route));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(m));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(spill));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(zero));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(ivf.lists_file_bytes));
  if (spill == 0 || spill > kMaxSpill || spill > lists || zero != 0 || dim == 0 || dim > 4096 ||
      m == 0 || m > 257 || dim % m != 0 || route == 0 || route > dim || lists == 0 ||
      lists > kMaxLists || lists > ivf.documents ||
      ivf.documents > std::numeric_limits<std::uint32_t>::max()) {
    return data_loss_error(fmt::format(
        "`{}`: IVF shape (N = {}, lists = {}, d' = {}, r = {}, M = {}, spill {}) is invalid",
        file.string(), ivf.documents, lists, dim, route, m, spill));
  }
  const std::size_t codebook = std::size_t{m} * 256 * (dim / m);
  const std::size_t expected = codebook * 4 + std::size_t{lists} * route * 2 +
                               std::size_t{lists} * kDirectoryEntryBytes;
  if (r.remaining() != expected) {
    return data_loss_error(fmt::format("`{}`: {} bytes of data, the declared shape takes {}",
                                       file.string(), r.remaining(), expected));
  }
  ivf.lists = lists;
  ivf.spill = spill;
  ivf.route_dim = route;
  ivf.codebook = shaped_codebook(dim, m);
  PRIVSEARCH_RETURN_IF_ERROR(get_floats(r, ivf.codebook.centroids, "IVF codebook"));
  ivf.centroids.resize(std::size_t{lists} * route);
  ivf.centroid_halves.resize(ivf.centroids.size());
  for (std::size_t i = 0; i < ivf.centroids.size(); ++i) {
    std::uint16_t& bits = ivf.centroid_halves[i];
    float& c = ivf.centroids[i];
    PRIVSEARCH_RETURN_IF_ERROR(r.get_u16(bits));
    c = half_bits_to_float(bits);
    if (!std::isfinite(c)) return data_loss_error(fmt::format("`{}`: a centroid is not finite", file.string()));
  }
  ivf.directory.resize(lists);
  std::uint64_t next = kListsFileHeaderBytes, total = 0;
  for (std::size_t l = 0; l < lists; ++l) {
    auto& ref = ivf.directory[l];
    PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(ref.offset));
    PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(ref.bytes));
    PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(ref.count));
    PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(ref.sha256));
    if (ref.offset != next || ref.bytes != segment_bytes(ref.count, m)) {
      return data_loss_error(fmt::format(
          "`{}`: list {}'s segment (offset {}, {} bytes, {} documents) does not follow the "
          "previous one or disagrees with its count", file.string(), l, ref.offset, ref.bytes, ref.count));
    }
    next += ref.bytes;
    total += ref.count;
  }
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  if (total != ivf.documents * spill || next != ivf.lists_file_bytes) {
    return data_loss_error(fmt::format("`{}`: the lists hold {} entries in {} bytes; the "
                                       "header says {} documents x {} in {}", file.string(), total,
                                       next, ivf.documents, spill, ivf.lists_file_bytes));
  }
  return ivf;
}

Status check_ivf_matches(const IvfIndex& ivf, const Manifest& manifest) {
  if (ivf.total_documents() != manifest.documents || ivf.codebook.dim != manifest.dim) {
    return data_loss_error(fmt::format(
        "the IVF directory ({} documents, d' = {}) does not match the manifest's collection ({}, "
        "d' = {})", ivf.total_documents(), ivf.codebook.dim, manifest.documents, manifest.dim));
  }
  return Status();
}

std::vector<std::uint32_t> route_query(const IvfIndex& ivf, std::span<const float> q,
                                       std::size_t nprobe) {
  nprobe = std::min(nprobe, ivf.lists);
  if (q.size() < ivf.route_dim) return {};
  // score = C q[:r] with C the lists x r centroid matrix, read as the stored halves
  // (index/route_kernel.h); an index assembled without them falls back to the widened floats.
  std::vector<float> score(ivf.lists);
  if (ivf.centroid_halves.size() == ivf.lists * ivf.route_dim) {
    half_matvec(ivf.centroid_halves.data(), ivf.lists, ivf.route_dim, q.data(), score.data());
  } else {
    for (std::size_t l = 0; l < ivf.lists; ++l) {
      float s = 0;
      for (std::size_t j = 0; j < ivf.route_dim; ++j) s += ivf.centroids[l * ivf.route_dim + j] * q[j];
      score[l] = s;
    }
  }
  std::vector<std::uint32_t> order(ivf.lists);
  std::iota(order.begin(), order.end(), 0u);
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(nprobe), order.end(),
                    [&](std::uint32_t a, std::uint32_t b) {
                      return score[a] > score[b] || (score[a] == score[b] && a < b);
                    });
  order.resize(nprobe);
  return order;
}

Result<IvfList> decode_list(const IvfIndex& ivf, std::uint32_t list,
                            std::span<const std::uint8_t> segment, std::uint32_t generation) {
  if (list >= ivf.lists || generation > ivf.deltas.size()) {
    return out_of_range_error(fmt::format("list {} of generation {} outside the index's {} lists "
                                          "and {} generations", list, generation, ivf.lists,
                                          ivf.deltas.size()));
  }
  const auto& ref = ivf.ref(list, generation);
  const std::uint64_t first = generation == 0 ? 0 : ivf.deltas[generation - 1].first_document;
  const std::uint64_t end = generation == 0 ? ivf.documents : ivf.deltas[generation - 1].documents;
  if (segment.size() != ref.bytes || sha256(segment) != ref.sha256) {
    return data_loss_error(fmt::format(
        "list {}'s segment ({} bytes) is not the one the index directory names ({} bytes, "
        "SHA-256 {}): tampered, truncated or from another index", list, segment.size(), ref.bytes,
        to_hex(ref.sha256).substr(0, 16)));
  }
  ByteReader r(segment);
  std::uint8_t magic[4];
  std::uint16_t version = 0, zero16 = 0;
  std::uint32_t named = 0, count = 0, m = 0, zero32 = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(magic));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u16(version));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u16(zero16));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(named));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(count));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(m));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(zero32));
  if (std::memcmp(magic, kSegmentMagic, 4) != 0 || version != 1 || named != list ||
      count != ref.count || m != ivf.codebook.m) {
    return data_loss_error(fmt::format("list {}'s segment header is not a version 1 segment of "
                                       "this list and codebook", list));
  }
  IvfList out;
  out.list = list;
  out.generation = generation;
  out.count = count;
  out.ids.resize(count);
  for (auto& id : out.ids) PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(id));
  for (std::size_t i = 0; i < count; ++i) {
    if (out.ids[i] < first || out.ids[i] >= end || (i > 0 && out.ids[i] <= out.ids[i - 1])) {
      return data_loss_error(fmt::format("list {}: document ids not ascending inside the collection", list));
    }
  }
  out.blocked.resize(blocked_bytes(count, m));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(out.blocked));
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  return out;
}

Result<std::vector<std::uint32_t>> ivf_search(const IvfIndex& ivf,
                                              std::span<const IvfList* const> lists,
                                              std::span<const float> query, std::size_t k,
                                              std::span<const std::uint32_t> deleted) {
  std::vector<CodeSegment> segments;
  segments.reserve(lists.size());
  for (const IvfList* l : lists) segments.push_back(l->segment());
  return scan_top_k(ivf.codebook, segments, query, k, ivf.spill, deleted);
}

}  // namespace privsearch::index
