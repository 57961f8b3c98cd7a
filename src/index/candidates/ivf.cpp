#include "index/candidates/ivf.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>

#include "core/bytes.h"
#include "core/half.h"
#include "index/artifacts/artifacts.h"
#include "index/artifacts/atomic_file.h"
#include "index/candidates/ivf_format.h"

namespace privsearch::index {

using ivf_format::kDirectoryEntryBytes;
using ivf_format::kMaxLists;
using ivf_format::kSegmentMagic;
using ivf_format::segment_bytes;

namespace {

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

Status check_ivf_shape(std::size_t rows, std::size_t cols, std::size_t lists, std::size_t r,
                       std::size_t spill) {
  if (lists == 0 || lists > rows || lists > kMaxLists) {
    return invalid_argument_error(
        fmt::format("{} IVF lists for {} documents; at most one list per document (and {})", lists,
                    rows, kMaxLists));
  }
  if (spill < 1 || spill > kMaxSpill || spill > lists) {
    return invalid_argument_error(
        fmt::format("each document in {} lists; between 1 and {} (and at most the {} lists)", spill,
                    kMaxSpill, lists));
  }
  if (r == 0 || r > cols) {
    return invalid_argument_error(
        fmt::format("IVF route dimension {} outside [1, d' = {}]", r, cols));
  }
  if (rows > std::numeric_limits<std::uint32_t>::max()) {
    return invalid_argument_error("the IVF lists hold 32-bit document ids");
  }
  return Status();
}

// Each list's documents, ascending (a document in `spill` lists appears in each); the documents
// are numbered from `first` (an update generation's first id).
Result<std::vector<std::vector<std::uint32_t>>> list_members(
    std::span<const std::uint32_t> assignment, std::size_t lists, std::size_t documents,
    std::size_t spill, std::uint64_t first = 0) {
  std::vector<std::uint32_t> sizes(lists, 0);
  for (const auto l : assignment) {
    if (l >= lists)
      return invalid_argument_error(fmt::format("assignment to list {} of {}", l, lists));
    ++sizes[l];
  }
  std::vector<std::vector<std::uint32_t>> members(lists);
  for (std::size_t l = 0; l < lists; ++l) members[l].reserve(sizes[l]);
  for (std::size_t d = 0; d < documents; ++d) {
    for (std::size_t s = 0; s < spill; ++s) {
      members[assignment[d * spill + s]].push_back(static_cast<std::uint32_t>(first + d));
    }
  }
  return members;
}

// ivf_lists.bin: one segment per list, each list's directory entry (offset, bytes, count,
// SHA-256) filled into `ivf`; `members` are released as they are written.
Status write_list_segments(IvfIndex& ivf, std::vector<std::vector<std::uint32_t>>& members,
                           const PqArtifact& codes, const std::filesystem::path& dir) {
  ivf.directory.resize(ivf.lists);
  ByteWriter lw;
  put_lists_header(lw, ivf.lists);
  for (std::size_t l = 0; l < ivf.lists; ++l) {
    const std::size_t start = lw.size();
    const std::uint32_t count = static_cast<std::uint32_t>(members[l].size());
    put_segment(lw, static_cast<std::uint32_t>(l), members[l], codes);
    std::vector<std::uint32_t>().swap(members[l]);
    auto& ref = ivf.directory[l];
    ref.offset = start;
    ref.bytes = lw.size() - start;
    ref.count = count;
    ref.sha256 = sha256(std::span(lw.bytes()).subspan(start, ref.bytes));
  }
  ivf.lists_file_bytes = lw.size();
  return write_bytes_atomically(dir / kIvfListsFile, lw.bytes());
}

// ivf.bin: the header, the PQ codebook, the centroids (half precision) and the list directory.
std::vector<std::uint8_t> encode_ivf_file(const IvfIndex& ivf) {
  ByteWriter w;
  put_header(w, "PSIV");
  w.put_u64(ivf.documents);
  w.put_u32(static_cast<std::uint32_t>(ivf.lists));
  w.put_u32(static_cast<std::uint32_t>(ivf.codebook.dim));
  w.put_u32(static_cast<std::uint32_t>(ivf.route_dim));
  w.put_u32(static_cast<std::uint32_t>(ivf.codebook.m));
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
  return w.take();
}

}  // namespace

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
  PRIVSEARCH_ASSIGN_OR_RETURN(auto members, list_members(assignment, lists, codes.count, spill));
  IvfIndex ivf;
  ivf.documents = codes.count;
  ivf.spill = spill;
  ivf.lists = lists;
  ivf.route_dim = r;
  ivf.codebook = codes.codebook;
  ivf.centroids = centroids;
  ivf.centroid_halves.reserve(centroids.size());
  for (const float c : centroids) ivf.centroid_halves.push_back(float_to_half_bits(c));
  PRIVSEARCH_RETURN_IF_ERROR(write_list_segments(ivf, members, codes, dir));
  PRIVSEARCH_RETURN_IF_ERROR(write_bytes_atomically(dir / kIvfFile, encode_ivf_file(ivf)));
  return std::vector<ArtifactEntry>{{kIvfListsArtifact, kIvfListsFile, 0, ""},
                                    {kIvfArtifact, kIvfFile, 0, ""}};
}

Result<std::vector<ArtifactEntry>> write_ivf_delta(const IvfIndex& base, std::uint32_t generation,
                                                   std::span<const std::uint32_t> assignment,
                                                   const PqArtifact& codes,
                                                   const std::filesystem::path& dir) {
  const std::size_t lists = base.lists, m = base.codebook.m, spill = base.spill;
  if (generation != base.deltas.size() + 1) {
    return failed_precondition_error(fmt::format("IVF generation {} written after {} generations",
                                                 generation, base.deltas.size()));
  }
  if (codes.codebook.m != m || codes.codebook.dim != base.codebook.dim ||
      assignment.size() != codes.count * spill) {
    return invalid_argument_error(
        "the appended documents' codes or list assignment do not fit "
        "the IVF index (codebook shape, spill)");
  }
  const std::uint64_t first = base.total_documents();
  if (first + codes.count > std::numeric_limits<std::uint32_t>::max()) {
    return invalid_argument_error("document ids above 2^32 - 1");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto members,
                              list_members(assignment, lists, codes.count, spill, first));
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
                                       r.remaining(), changed,
                                       changed * (kDirectoryEntryBytes + 4)));
  }
  delta.directory.resize(lists);
  std::uint64_t next = kListsFileHeaderBytes, total = 0;
  std::int64_t previous = -1;
  for (std::uint32_t e = 0; e < changed; ++e) {
    std::uint32_t list = 0;
    PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(list));
    if (list >= lists || static_cast<std::int64_t>(list) <= previous) {
      return data_loss_error(
          fmt::format("`{}`: delta lists not ascending inside the index", file.string()));
    }
    previous = list;
    auto& ref = delta.directory[list];
    PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(ref.count));
    PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(ref.offset));
    PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(ref.bytes));
    PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(ref.sha256));
    if (ref.count == 0 || ref.offset != next || ref.bytes != segment_bytes(ref.count, m)) {
      return data_loss_error(
          fmt::format("`{}`: list {}'s delta segment does not follow the "
                      "previous one or disagrees with its count",
                      file.string(), list));
    }
    next += ref.bytes;
    total += ref.count;
  }
  if (total != (delta.documents - delta.first_document) * ivf.spill ||
      next != delta.lists_file_bytes) {
    return data_loss_error(
        fmt::format("`{}`: the delta lists hold {} entries in {} bytes; the "
                    "header says {} documents x {} in {}",
                    file.string(), total, next, delta.documents - delta.first_document, ivf.spill,
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
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto choices,
                              list_choices(centroids, r, std::min(kListChoices, lists), x));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto of_doc, balanced_assignment(choices, lists, o.spill));
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
  const std::size_t expected =
      codebook * 4 + std::size_t{lists} * route * 2 + std::size_t{lists} * kDirectoryEntryBytes;
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
    if (!std::isfinite(c))
      return data_loss_error(fmt::format("`{}`: a centroid is not finite", file.string()));
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
          "previous one or disagrees with its count",
          file.string(), l, ref.offset, ref.bytes, ref.count));
    }
    next += ref.bytes;
    total += ref.count;
  }
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  if (total != ivf.documents * spill || next != ivf.lists_file_bytes) {
    return data_loss_error(
        fmt::format("`{}`: the lists hold {} entries in {} bytes; the "
                    "header says {} documents x {} in {}",
                    file.string(), total, next, ivf.documents, spill, ivf.lists_file_bytes));
  }
  return ivf;
}

Status check_ivf_matches(const IvfIndex& ivf, const Manifest& manifest) {
  if (ivf.total_documents() != manifest.documents || ivf.codebook.dim != manifest.dim) {
    return data_loss_error(fmt::format(
        "the IVF directory ({} documents, d' = {}) does not match the manifest's collection ({}, "
        "d' = {})",
        ivf.total_documents(), ivf.codebook.dim, manifest.documents, manifest.dim));
  }
  return Status();
}

}  // namespace privsearch::index
