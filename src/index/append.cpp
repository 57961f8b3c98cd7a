#include "index/append.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "core/bytes.h"
#include "index/artifacts.h"
#include "index/atomic_file.h"
#include "index/exact_store.h"
#include "index/ivf.h"
#include "index/manifest_signature.h"
#include "index/payload_store.h"
#include "index/pq.h"

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

// The exact store's value type: u32 at offset 20 of its header (index/exact_store.h).
Result<StoreDtype> base_store_dtype(const std::filesystem::path& file) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto h, read_prefix(file, 24));
  if (std::string_view(reinterpret_cast<const char*>(h.data()), 4) != "PSXS") {
    return data_loss_error(fmt::format("`{}` is not an exact store", file.string()));
  }
  const std::uint32_t type = h[20] | (h[21] << 8) | (h[22] << 16) | (std::uint32_t{h[23]} << 24);
  if (type > 1) return data_loss_error(fmt::format("`{}`: value type {} unknown", file.string(), type));
  return static_cast<StoreDtype>(type);
}

// The payload store's record size: u32 at offset 16 of its header (index/payload_store.h).
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
  if (old.find("exact_store") == nullptr || old.find("projection") == nullptr) {
    return failed_precondition_error(fmt::format(
        "`{}` lists no exact store or projection: update the index directory the provider "
        "serves (a client's copy is refreshed with client-files afterwards)", dir.string()));
  }
  const auto is_scoring = [](const ArtifactEntry& e) { return e.name.starts_with("scoring_"); };
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
    return invalid_argument_error(fmt::format("the new vectors have dimension {}; the index's "
                                              "input dimension is {}", input.vectors.cols,
                                              old.input_dim));
  }
  const bool has_payloads = old.find("payloads") != nullptr;
  if (has_payloads && input.documents.size() != a) {
    return invalid_argument_error(fmt::format("{} new vectors but {} new documents", a,
                                              input.documents.size()));
  }
  if (n_old + a > std::numeric_limits<std::uint32_t>::max()) {
    return invalid_argument_error("document ids would pass 2^32 - 1");
  }
  std::vector<std::uint32_t> deleted;
  for (const auto id : input.deleted) {
    if (id >= n_old) {
      return invalid_argument_error(fmt::format(
          "cannot delete document {}: the index holds ids 0 .. {}", id, n_old - 1));
    }
    deleted.push_back(static_cast<std::uint32_t>(id));
  }
  std::sort(deleted.begin(), deleted.end());
  deleted.erase(std::unique(deleted.begin(), deleted.end()), deleted.end());

  std::vector<std::string> read_names{"projection"};
  for (const char* n : {"pq", kIvfArtifact}) {
    if (old.find(n) != nullptr) read_names.emplace_back(n);
  }
  const std::uint32_t g = index_generations(old) + 1;
  for (std::uint32_t h = 1; h < g; ++h) {
    read_names.push_back(generation_artifact(kIvfDeltaArtifact, h));
  }
  std::erase_if(read_names, [&](const std::string& n) { return old.find(n) == nullptr; });
  PRIVSEARCH_RETURN_IF_ERROR(verify_artifacts(dir, old, read_names));

  Manifest next = old;
  std::erase_if(next.artifacts, is_scoring);
  std::vector<ArtifactEntry> added;
  const auto file_of = [&](const char* name) { return fmt::format("{}.{}.bin", name, g); };
  Matrix x{0, old.dim, {}};  // the new rows, projected
  if (a > 0) {
    say(fmt::format("projecting {} new documents", a));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto proj, load_projection(dir / old.find("projection")->file));
    x = proj.project_documents(input.vectors);
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto dtype,
                                base_store_dtype(dir / old.find("exact_store")->file));
    PRIVSEARCH_RETURN_IF_ERROR(ExactStore::write(dir / file_of("exact_store"), x, dtype));
    added.push_back({generation_artifact("exact_store", g), file_of("exact_store"), 0, ""});
    if (has_payloads) {
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto record_bytes,
                                  base_record_bytes(dir / old.find("payloads")->file));
      PRIVSEARCH_RETURN_IF_ERROR(
          PayloadStore::write(dir / file_of("payloads"), input.documents, record_bytes));
      added.push_back({generation_artifact("payloads", g), file_of("payloads"), 0, ""});
    }
    if (const auto* pq = old.find("pq"); pq != nullptr) {
      say("encoding the flat PQ codes");
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto base, load_pq(dir / pq->file));
      PqArtifact delta;
      delta.codebook = base.codebook;
      delta.count = a;
      PRIVSEARCH_ASSIGN_OR_RETURN(delta.codes, pq_encode(base.codebook, x));
      PRIVSEARCH_RETURN_IF_ERROR(save_pq(dir / file_of("pq"), delta));
      added.push_back({generation_artifact("pq", g), file_of("pq"), 0, ""});
    }
  }
  if (const auto* ivf_entry = old.find(kIvfArtifact); ivf_entry != nullptr) {
    // Every generation of an IVF index has its list additions (none for deletions only), so
    // that generation g's delta is always the index's g-th.
    say("assigning the new documents to IVF lists");
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
    codes.count = a;
    if (a > 0) {
      PRIVSEARCH_ASSIGN_OR_RETURN(assignment,
                                  assign_to_lists(ivf.centroids, ivf.route_dim, ivf.spill, x));
      PRIVSEARCH_ASSIGN_OR_RETURN(codes.codes, pq_encode(ivf.codebook, x));
    }
    PRIVSEARCH_ASSIGN_OR_RETURN(auto entries, write_ivf_delta(ivf, g, assignment, codes, dir));
    added.insert(added.end(), entries.begin(), entries.end());
  }
  PRIVSEARCH_RETURN_IF_ERROR(write_bytes_atomically(dir / file_of(kTombstonesArtifact),
                                                    encode_tombstones(g, deleted)));
  added.push_back({generation_artifact(kTombstonesArtifact, g), file_of(kTombstonesArtifact), 0, ""});

  next.documents = n_old + a;
  next.artifacts.insert(next.artifacts.end(), added.begin(), added.end());
  next.sequence = 0;
  next.parent_version.clear();
  if (signing_key != nullptr) {
    next.sequence = old.sequence + 1;
    next.parent_version = old.version_id;
  }
  say("writing the manifest");
  PRIVSEARCH_RETURN_IF_ERROR(write_manifest(dir, next, /*keep_known_hashes=*/true));
  if (signing_key != nullptr) {
    PRIVSEARCH_RETURN_IF_ERROR(write_manifest_signature(dir, next, *signing_key));
  } else {
    std::error_code ec;  // an old signature would name the old version: stale, remove it
    std::filesystem::remove(dir / kManifestSignatureFile, ec);
  }

  AppendResult out;
  out.generation = g;
  out.appended = a;
  out.deleted = deleted.size();
  std::uint64_t common = std::filesystem::file_size(dir / "manifest.json") +
                         artifact_bytes(next, generation_artifact(kTombstonesArtifact, g));
  if (signing_key != nullptr) common += std::filesystem::file_size(dir / kManifestSignatureFile);
  out.flat_client_bytes = common + artifact_bytes(next, generation_artifact("pq", g));
  out.ivf_client_bytes = common + artifact_bytes(next, generation_artifact(kIvfDeltaArtifact, g));
  out.manifest = std::move(next);
  return out;
}

}  // namespace privsearch::index
