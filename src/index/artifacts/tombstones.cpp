#include "index/artifacts/tombstones.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "core/bytes.h"
#include "index/artifacts/artifacts.h"
#include "index/artifacts/atomic_file.h"

namespace privsearch::index {

std::vector<std::uint8_t> encode_tombstones(std::uint32_t generation,
                                            std::span<const std::uint32_t> ids) {
  ByteWriter w;
  put_header(w, "PSTB");
  w.put_u32(generation);
  w.put_u32(0);
  w.put_u64(ids.size());
  for (const auto id : ids) w.put_u32(id);
  return w.take();
}

Result<std::vector<std::uint32_t>> parse_tombstones(std::span<const std::uint8_t> bytes,
                                                    std::uint32_t generation,
                                                    std::uint64_t documents,
                                                    const std::filesystem::path& file) {
  ByteReader r(bytes);
  PRIVSEARCH_RETURN_IF_ERROR(read_header(r, "PSTB", file));
  std::uint32_t named = 0, zero = 0;
  std::uint64_t count = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(named));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(zero));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(count));
  if (named != generation || zero != 0 || count > documents || r.remaining() != count * 4) {
    return data_loss_error(
        fmt::format("`{}`: not the tombstones of generation {} ({} ids in {} "
                    "bytes)",
                    file.string(), generation, count, r.remaining()));
  }
  std::vector<std::uint32_t> ids(count);
  for (std::size_t i = 0; i < count; ++i) {
    PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(ids[i]));
    if (ids[i] >= documents || (i > 0 && ids[i] <= ids[i - 1])) {
      return data_loss_error(
          fmt::format("`{}`: deleted ids not ascending inside the collection", file.string()));
    }
  }
  return ids;
}

Result<std::vector<std::uint32_t>> load_tombstones(const std::filesystem::path& dir,
                                                   const Manifest& manifest) {
  std::vector<std::uint32_t> all;
  const std::uint32_t generations = index_generations(manifest);
  for (std::uint32_t g = 1; g <= generations; ++g) {
    const auto* entry = manifest.find(generation_artifact(kTombstonesArtifact, g));
    if (entry == nullptr) {
      return data_loss_error(
          fmt::format("the manifest lists generation {} but not its tombstones", g));
    }
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, read_file_bytes(dir / entry->file));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto ids,
                                parse_tombstones(bytes, g, manifest.documents, dir / entry->file));
    std::vector<std::uint32_t> merged;
    merged.reserve(all.size() + ids.size());
    std::set_union(all.begin(), all.end(), ids.begin(), ids.end(), std::back_inserter(merged));
    all.swap(merged);
  }
  return all;
}

}  // namespace privsearch::index
