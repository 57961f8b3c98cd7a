#include "index/artifacts/append.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <limits>
#include <set>

#include "core/bytes.h"
#include "index/artifacts/artifact_names.h"
#include "index/artifacts/artifacts.h"
#include "index/artifacts/atomic_file.h"
#include "index/artifacts/doc_ids.h"
#include "index/artifacts/exact_store.h"
#include "index/artifacts/manifest_signature.h"
#include "index/artifacts/payload_store.h"
#include "index/artifacts/record_digests.h"
#include "index/artifacts/tombstones.h"
#include "index/candidates/ivf.h"
#include "index/candidates/pq.h"

namespace privsearch::index {
namespace {

// The first `n` bytes of a file (the fixed headers of the stores: reading the whole base store
// to learn its value type would read gigabytes at scale).
Result<std::vector<std::uint8_t>> read_prefix(const std::filesystem::path& file, std::size_t n) {
  std::ifstream in(file, std::ios::binary);
  std::vector<std::uint8_t> bytes(n);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(n))) {
    return data_loss_error(fmt::format("`{}`: shorter than its {}-byte header", file.string(), n));
  }
  return bytes;
}

// The exact store's value type: u32 at offset 20 of its header (index/artifacts/exact_store.h).
Result<StoreDtype> base_store_dtype(const std::filesystem::path& file) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto h, read_prefix(file, 24));
  if (std::string_view(reinterpret_cast<const char*>(h.data()), 4) != "PSXS") {
    return data_loss_error(fmt::format("`{}` is not an exact store", file.string()));
  }
  const std::uint32_t type = h[20] | (h[21] << 8) | (h[22] << 16) | (std::uint32_t{h[23]} << 24);
  if (type > 1)
    return data_loss_error(fmt::format("`{}`: value type {} unknown", file.string(), type));
  return static_cast<StoreDtype>(type);
}

// The payload store's record size: u32 at offset 16 of its header
// (index/artifacts/payload_store.h).
Result<std::size_t> base_record_bytes(const std::filesystem::path& file) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto h, read_prefix(file, 20));
  if (std::string_view(reinterpret_cast<const char*>(h.data()), 4) != "PSPL") {
    return data_loss_error(fmt::format("`{}` is not a payload store", file.string()));
  }
  return std::size_t{h[16]} | (std::size_t{h[17]} << 8) | (std::size_t{h[18]} << 16) |
         (std::size_t{h[19]} << 24);
}

std::uint64_t artifact_bytes(const Manifest& m, const std::string& name) {
  const auto* a = m.find(name);
  return a == nullptr ? 0 : a->bytes;
}

bool is_scoring(const ArtifactEntry& e) { return e.name.starts_with("scoring_"); }

// The checks of an update against the served index, and the deleted ids sorted and unique.
Result<std::vector<std::uint32_t>> checked_deletions(const std::filesystem::path& dir,
                                                     const Manifest& old,
                                                     const AppendInput& input) {
  if (old.find(kExactStoreArtifact) == nullptr || old.find(kProjectionArtifact) == nullptr) {
    return failed_precondition_error(fmt::format(
        "`{}` lists no exact store or projection: update the index directory the provider "
        "serves (a client's copy is refreshed with client-files afterwards)",
        dir.string()));
  }
  if (std::any_of(old.artifacts.begin(), old.artifacts.end(), is_scoring) &&
      !input.drop_access_private) {
    return failed_precondition_error(
        "the index has access-private scoring, whose cluster layout covers every document and "
        "cannot take an update: rebuild the index, or update without it (--drop-access-private)");
  }
  const std::uint64_t n_old = old.documents;
  const std::size_t a = input.vectors.rows;
  if (a == 0 && input.deleted.empty()) {
    return failed_precondition_error("nothing to update: no documents to add or delete");
  }
  if (a != 0 && input.vectors.cols != old.input_dim) {
    return invalid_argument_error(
        fmt::format("the new vectors have dimension {}; the index's "
                    "input dimension is {}",
                    input.vectors.cols, old.input_dim));
  }
  if (old.find(kPayloadsArtifact) != nullptr && input.documents.size() != a) {
    return invalid_argument_error(
        fmt::format("{} new vectors but {} new documents", a, input.documents.size()));
  }
  if (n_old + a > std::numeric_limits<std::uint32_t>::max()) {
    return invalid_argument_error("document ids would pass 2^32 - 1");
  }
  std::vector<std::uint32_t> deleted;
  for (const auto id : input.deleted) {
    if (id >= n_old) {
      return invalid_argument_error(
          fmt::format("cannot delete document {}: the index holds ids 0 .. {}", id, n_old - 1));
    }
    deleted.push_back(static_cast<std::uint32_t>(id));
  }
  std::sort(deleted.begin(), deleted.end());
  deleted.erase(std::unique(deleted.begin(), deleted.end()), deleted.end());
  return deleted;
}

// Re-hashes what the update reads: the projection, the candidate indexes, earlier IVF deltas,
// and the ids and tombstones an update by id resolves against.
Status verify_what_the_update_reads(const std::filesystem::path& dir, const Manifest& old,
                                    std::uint32_t g) {
  std::vector<std::string> read_names{kProjectionArtifact, kDocIdsArtifact};
  for (const char* n : {kPqArtifact, kIvfArtifact}) read_names.emplace_back(n);
  for (std::uint32_t h = 1; h < g; ++h) {
    for (const char* n : {kIvfDeltaArtifact, kDocIdsArtifact, kTombstonesArtifact}) {
      read_names.push_back(generation_artifact(n, h));
    }
  }
  std::erase_if(read_names, [&](const std::string& n) { return old.find(n) == nullptr; });
  return verify_artifacts(dir, old, read_names);
}

// The rows an update removes by document id: each id of `delete_ids`, and the live row of every
// new document whose id the index holds (an upsert). Refuses an id added twice in one update,
// and an id to delete that names no live document.
struct IdRows {
  std::vector<std::uint64_t> rows;
  std::uint64_t replaced = 0;
};
Result<IdRows> rows_of_ids(const std::filesystem::path& dir, const Manifest& old,
                           const AppendInput& input) {
  std::set<std::string_view> adding;
  for (const auto& d : input.documents) {
    PRIVSEARCH_RETURN_IF_ERROR(check_doc_id(d.id));
    if (!adding.insert(d.id).second) {
      return invalid_argument_error(
          fmt::format("document id `{}` is added twice in this update", d.id));
    }
  }
  IdRows out;
  const auto* base = old.find(kDocIdsArtifact);
  if (base == nullptr) {
    if (input.delete_ids.empty()) return out;
    return failed_precondition_error(
        "this index was built before document ids: delete by row number (--delete-rows)");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(auto ids, DocIds::open(dir / base->file));
  for (std::uint32_t h = 1; h <= index_generations(old); ++h) {
    const auto* more = old.find(generation_artifact(kDocIdsArtifact, h));
    if (more == nullptr) continue;
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto table, DocIds::open(dir / more->file));
    PRIVSEARCH_RETURN_IF_ERROR(ids.append(table));
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto tombstones, load_tombstones(dir, old));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto live, ids.live_rows(tombstones));
  for (const auto& id : input.delete_ids) {
    const auto it = live.find(id);
    if (it == live.end()) {
      return invalid_argument_error(fmt::format(
          "cannot delete document `{}`: no live document of the index has that id", id));
    }
    out.rows.push_back(it->second);
  }
  for (const auto& d : input.documents) {
    if (const auto it = live.find(d.id); it != live.end()) {
      out.rows.push_back(it->second);
      ++out.replaced;
    }
  }
  return out;
}

std::string generation_file(const char* name, std::uint32_t g) {
  return fmt::format("{}.{}.bin", name, g);
}

// Generation g's rows: the new documents projected (returned), their exact store, payloads and
// flat PQ codes written, their entries appended to `added`.
Result<Matrix> write_row_additions(const std::filesystem::path& dir, const Manifest& old,
                                   const AppendInput& input, std::uint32_t g,
                                   const std::function<void(const std::string&)>& say,
                                   std::vector<ArtifactEntry>& added) {
  const std::size_t a = input.vectors.rows;
  if (a == 0) return Matrix{0, old.dim, {}};
  say(fmt::format("projecting {} new documents", a));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto proj,
                              load_projection(dir / old.find(kProjectionArtifact)->file));
  Matrix x = proj.project_documents(input.vectors);
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto dtype,
                              base_store_dtype(dir / old.find(kExactStoreArtifact)->file));
  PRIVSEARCH_RETURN_IF_ERROR(
      ExactStore::write(dir / generation_file(kExactStoreArtifact, g), x, dtype));
  added.push_back({generation_artifact(kExactStoreArtifact, g),
                   generation_file(kExactStoreArtifact, g), 0, ""});
  if (const auto* payloads = old.find(kPayloadsArtifact); payloads != nullptr) {
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto record_bytes, base_record_bytes(dir / payloads->file));
    const auto file = dir / generation_file(kPayloadsArtifact, g);
    PRIVSEARCH_RETURN_IF_ERROR(PayloadStore::write(file, input.documents, record_bytes));
    added.push_back(
        {generation_artifact(kPayloadsArtifact, g), generation_file(kPayloadsArtifact, g), 0, ""});
    if (old.find(kDocIdsArtifact) != nullptr) {  // the new ids follow the old ones
      std::vector<std::string> ids;
      for (const auto& d : input.documents) ids.push_back(d.id);
      PRIVSEARCH_RETURN_IF_ERROR(
          DocIds::write(dir / generation_file(kDocIdsArtifact, g), ids, old.documents));
      added.push_back(
          {generation_artifact(kDocIdsArtifact, g), generation_file(kDocIdsArtifact, g), 0, ""});
    }
    if (old.find(kPayloadDigestsArtifact) != nullptr) {  // the new records follow the old ones
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto written, PayloadStore::open(file));
      PRIVSEARCH_RETURN_IF_ERROR(RecordDigests::write(
          dir / generation_file(kPayloadDigestsArtifact, g), written, old.documents));
      added.push_back({generation_artifact(kPayloadDigestsArtifact, g),
                       generation_file(kPayloadDigestsArtifact, g), 0, ""});
    }
  }
  if (const auto* pq = old.find(kPqArtifact); pq != nullptr) {
    say("encoding the flat PQ codes");
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto base, load_pq(dir / pq->file));
    PqArtifact delta;
    delta.codebook = base.codebook;
    delta.count = a;
    PRIVSEARCH_ASSIGN_OR_RETURN(delta.codes, pq_encode(base.codebook, x));
    PRIVSEARCH_RETURN_IF_ERROR(save_pq(dir / generation_file(kPqArtifact, g), delta));
    added.push_back({generation_artifact(kPqArtifact, g), generation_file(kPqArtifact, g), 0, ""});
  }
  return x;
}

// Generation g's IVF delta (every generation of an IVF index has one, none for deletions only,
// so that generation g's delta is always the index's g-th): the lists as of generation g - 1,
// checked, and the new rows `x` assigned to them.
Status write_ivf_addition(const std::filesystem::path& dir, const Manifest& old, std::uint32_t g,
                          const Matrix& x, std::vector<ArtifactEntry>& added) {
  const auto* ivf_entry = old.find(kIvfArtifact);
  if (ivf_entry == nullptr) return Status();
  PRIVSEARCH_ASSIGN_OR_RETURN(auto ivf, load_ivf(dir / ivf_entry->file));
  for (std::uint32_t h = 1; h < g; ++h) {
    const auto* d = old.find(generation_artifact(kIvfDeltaArtifact, h));
    if (d == nullptr) {
      return data_loss_error(fmt::format("the manifest lists no IVF delta of generation {}", h));
    }
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, read_file_bytes(dir / d->file));
    PRIVSEARCH_RETURN_IF_ERROR(add_ivf_delta(ivf, bytes, dir / d->file));
  }
  PRIVSEARCH_RETURN_IF_ERROR(check_ivf_matches(ivf, old));
  std::vector<std::uint32_t> assignment;
  PqArtifact codes;
  codes.codebook = ivf.codebook;
  codes.count = x.rows;
  if (x.rows > 0) {
    PRIVSEARCH_ASSIGN_OR_RETURN(assignment,
                                assign_to_lists(ivf.centroids, ivf.route_dim, ivf.spill, x));
    PRIVSEARCH_ASSIGN_OR_RETURN(codes.codes, pq_encode(ivf.codebook, x));
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(auto entries, write_ivf_delta(ivf, g, assignment, codes, dir));
  added.insert(added.end(), entries.begin(), entries.end());
  return Status();
}

// The manifest of the new version written (signed when a key is given; an old signature would
// name the old version, so it is removed otherwise).
Status publish(const std::filesystem::path& dir, const Manifest& old, Manifest& next,
               const Ed25519SigningKey* signing_key) {
  next.sequence = 0;
  next.parent_version.clear();
  if (signing_key != nullptr) {
    next.sequence = old.sequence + 1;
    next.parent_version = old.version_id;
  }
  PRIVSEARCH_RETURN_IF_ERROR(write_manifest(dir, next, /*keep_known_hashes=*/true));
  if (signing_key != nullptr) return write_manifest_signature(dir, next, *signing_key);
  std::error_code ec;
  std::filesystem::remove(dir / kManifestSignatureFile, ec);
  return Status();
}

}  // namespace

Result<AppendResult> append_to_index(const std::filesystem::path& dir, const AppendInput& input,
                                     const Ed25519SigningKey* signing_key,
                                     const Progress& progress) {
  const auto say = [&](const std::string& step) {
    if (progress) progress(step);
  };
  // One update of a directory at a time: a second would write the same generation's files.
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto lock, FileLock::try_acquire(dir / ".update"));
  // Only what this update reads is re-hashed (the base store alone is gigabytes at scale).
  PRIVSEARCH_ASSIGN_OR_RETURN(Manifest old, load_manifest(dir, /*verify=*/false));
  const std::uint32_t g = index_generations(old) + 1;
  PRIVSEARCH_RETURN_IF_ERROR(verify_what_the_update_reads(dir, old, g));
  AppendInput resolved = input;  // the rows of the ids it deletes or replaces among `deleted`
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto by_id, rows_of_ids(dir, old, input));
  resolved.deleted.insert(resolved.deleted.end(), by_id.rows.begin(), by_id.rows.end());
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto deleted, checked_deletions(dir, old, resolved));

  Manifest next = old;
  std::erase_if(next.artifacts, is_scoring);
  std::vector<ArtifactEntry> added;
  PRIVSEARCH_ASSIGN_OR_RETURN(const Matrix x, write_row_additions(dir, old, input, g, say, added));
  if (old.find(kIvfArtifact) != nullptr) say("assigning the new documents to IVF lists");
  PRIVSEARCH_RETURN_IF_ERROR(write_ivf_addition(dir, old, g, x, added));
  const std::string tombstones = generation_file(kTombstonesArtifact, g);
  PRIVSEARCH_RETURN_IF_ERROR(
      write_bytes_atomically(dir / tombstones, encode_tombstones(g, deleted)));
  added.push_back({generation_artifact(kTombstonesArtifact, g), tombstones, 0, ""});
  next.documents = old.documents + input.vectors.rows;
  next.artifacts.insert(next.artifacts.end(), added.begin(), added.end());
  say("writing the manifest");
  PRIVSEARCH_RETURN_IF_ERROR(publish(dir, old, next, signing_key));

  AppendResult out;
  out.generation = g;
  out.appended = input.vectors.rows;
  out.deleted = deleted.size();
  out.replaced = by_id.replaced;
  std::uint64_t common = std::filesystem::file_size(dir / "manifest.json") +
                         artifact_bytes(next, generation_artifact(kTombstonesArtifact, g));
  if (signing_key != nullptr) common += std::filesystem::file_size(dir / kManifestSignatureFile);
  out.flat_client_bytes = common + artifact_bytes(next, generation_artifact(kPqArtifact, g));
  out.ivf_client_bytes = common + artifact_bytes(next, generation_artifact(kIvfDeltaArtifact, g));
  out.manifest = std::move(next);
  return out;
}

}  // namespace privsearch::index
