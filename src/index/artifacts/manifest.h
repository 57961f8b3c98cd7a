// The index manifest: what was built, from what, and the SHA-256 of every artifact file.
//
// manifest.json (written atomically) holds the build settings (collection, encoder id,
// projection kind, dtype, counts, dimensions, PQ M, seed) and one entry per artifact (name,
// file name relative to the index directory, byte size, SHA-256). The version id is the
// SHA-256 of the canonical JSON of all of that; client and provider exchange it and refuse to
// work on different versions. load_manifest() re-hashes every artifact and refuses any
// mismatch (tampered or truncated file) with a named error.
// Versions form a chain: `sequence` (1, 2, ...) and `parent_version` (the version id this one
// replaces) are set when a manifest is signed (`privsearch sign`,
// index/artifacts/manifest_signature.h); both are left out of the canonical JSON when absent, so
// unsigned indexes keep their ids. Thread safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace privsearch::index {

struct ArtifactEntry {
  std::string name;  // e.g. "exact_store", "pq", "projection", "payloads"
  std::string file;  // relative to the index directory
  std::uint64_t bytes = 0;
  std::string sha256;  // hex
};

struct Manifest {
  static constexpr int kFormatVersion = 1;
  int format_version = kFormatVersion;
  std::string collection;
  std::string encoder_id;
  std::string projection = "svd";
  std::string dtype = "float32";
  std::uint64_t documents = 0;
  std::uint64_t input_dim = 0;
  std::uint64_t dim = 0;
  std::uint64_t pq_m = 0;
  std::uint64_t seed = 0;
  std::vector<ArtifactEntry> artifacts;
  std::uint64_t sequence = 0;  // 0: not in a signed chain
  std::string parent_version;  // empty: none
  std::string version_id;      // hex SHA-256 of everything above (set by write/load)

  const ArtifactEntry* find(const std::string& name) const;
};

// Hashes the listed artifact files (entries need name and file), fills bytes/sha256/version_id
// and writes dir/manifest.json atomically. keep_known_hashes: entries that already carry a hash
// keep it (an update lists the old version's artifacts, verified and unchanged, beside new ones).
Status write_manifest(const std::filesystem::path& dir, Manifest& manifest,
                      bool keep_known_hashes = false);
// Reads dir/manifest.json, checks the format version, re-hashes every artifact (when `verify`)
// and recomputes the version id.
Result<Manifest> load_manifest(const std::filesystem::path& dir, bool verify = true);
// Re-hashes the named artifacts (all when `names` is empty): a client verifies only the public
// ones it reads (projection, pq, encoder, payloads), never needing the private exact store.
Status verify_artifacts(const std::filesystem::path& dir, const Manifest& manifest,
                        const std::vector<std::string>& names);
// Updates without a rebuild (index/artifacts/append.h) add generations 1, 2, ... of some artifacts;
// the artifact `name` of generation g is named "name.g" (g = 0: `name` itself, the base).
std::string generation_artifact(std::string_view name, std::uint32_t generation);
// The generations the manifest holds beyond the base: g counts while "tombstones.g" is listed
// (every generation has one, possibly empty).
std::uint32_t index_generations(const Manifest& manifest);

// kFailedPrecondition when the ids differ (client and provider built from different indexes).
Status check_version(const Manifest& manifest, const std::string& expected_version_id);

}  // namespace privsearch::index
