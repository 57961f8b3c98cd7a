#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/bytes.h"
#include "core/sha256.h"
#include "index/candidates/ivf.h"
#include "index/candidates/ivf_format.h"
#include "index/candidates/route_kernel.h"

// The client side of the IVF index: routing a query to its lists, decoding a fetched list
// segment (checked against the directory), and the scan over the probed lists.
namespace privsearch::index {

using ivf_format::blocked_bytes;
using ivf_format::kSegmentMagic;
using ivf_format::segment_bytes;

std::vector<std::uint32_t> route_query(const IvfIndex& ivf, std::span<const float> q,
                                       std::size_t nprobe) {
  nprobe = std::min(nprobe, ivf.lists);
  if (q.size() < ivf.route_dim) return {};
  // score = C q[:r] with C the lists x r centroid matrix, read as the stored halves
  // (index/candidates/route_kernel.h); an index assembled without them falls back to the widened
  // floats.
  std::vector<float> score(ivf.lists);
  if (ivf.centroid_halves.size() == ivf.lists * ivf.route_dim) {
    half_matvec(ivf.centroid_halves.data(), ivf.lists, ivf.route_dim, q.data(), score.data());
  } else {
    for (std::size_t l = 0; l < ivf.lists; ++l) {
      float s = 0;
      for (std::size_t j = 0; j < ivf.route_dim; ++j)
        s += ivf.centroids[l * ivf.route_dim + j] * q[j];
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
    return out_of_range_error(
        fmt::format("list {} of generation {} outside the index's {} lists "
                    "and {} generations",
                    list, generation, ivf.lists, ivf.deltas.size()));
  }
  const auto& ref = ivf.ref(list, generation);
  const std::uint64_t first = generation == 0 ? 0 : ivf.deltas[generation - 1].first_document;
  const std::uint64_t end = generation == 0 ? ivf.documents : ivf.deltas[generation - 1].documents;
  if (segment.size() != ref.bytes || sha256(segment) != ref.sha256) {
    return data_loss_error(fmt::format(
        "list {}'s segment ({} bytes) is not the one the index directory names ({} bytes, "
        "SHA-256 {}): tampered, truncated or from another index",
        list, segment.size(), ref.bytes, to_hex(ref.sha256).substr(0, 16)));
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
  // The size the header implies is checked before anything is allocated by it.
  if (std::memcmp(magic, kSegmentMagic, 4) != 0 || version != 1 || named != list ||
      count != ref.count || m != ivf.codebook.m || segment_bytes(count, m) != segment.size()) {
    return data_loss_error(
        fmt::format("list {}'s segment header is not a version 1 segment of "
                    "this list and codebook",
                    list));
  }
  IvfList out;
  out.list = list;
  out.generation = generation;
  out.count = count;
  out.ids.resize(count);
  for (auto& id : out.ids) PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(id));
  for (std::size_t i = 0; i < count; ++i) {
    if (out.ids[i] < first || out.ids[i] >= end || (i > 0 && out.ids[i] <= out.ids[i - 1])) {
      return data_loss_error(
          fmt::format("list {}: document ids not ascending inside the collection", list));
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
