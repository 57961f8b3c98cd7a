#include "index/artifacts/client_files.h"

#include <fmt/format.h>

#include <algorithm>

#include "index/artifacts/atomic_file.h"
#include "index/artifacts/manifest.h"
#include "index/artifacts/manifest_signature.h"
#include "index/artifacts/tombstones.h"
#include "index/candidates/ivf.h"

namespace privsearch::index {

Result<std::uint64_t> copy_client_files(const std::filesystem::path& index_dir,
                                        const std::filesystem::path& out,
                                        const std::vector<std::string>& names) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto manifest, load_manifest(index_dir, /*verify=*/false));
  for (const auto& name : names) {
    if (manifest.find(name) == nullptr) {
      return Status(StatusCode::kNotFound, fmt::format("the index in `{}` has no `{}` artifact",
                                                       index_dir.string(), name));
    }
  }
  // Update generations (index/artifacts/append.h): each named artifact's additions (the IVF
  // directory's are its delta directories; the list segments stay with the provider) and the
  // tombstones.
  std::vector<std::string> wanted = names;
  const std::uint32_t generations = index_generations(manifest);
  for (std::uint32_t g = 1; g <= generations; ++g) {
    wanted.push_back(generation_artifact(kTombstonesArtifact, g));
    for (const auto& name : names) {
      const auto added = generation_artifact(name == kIvfArtifact ? kIvfDeltaArtifact : name, g);
      if (manifest.find(added) != nullptr) wanted.push_back(added);
    }
  }
  // An update of a client directory copies only what it does not hold yet: an artifact its
  // current manifest lists with the same file, size and SHA-256 (verified when it was copied
  // and checked again by every client that opens it) stays.
  std::vector<std::string> copied;
  auto held = load_manifest(out, /*verify=*/false);
  for (const auto& name : wanted) {
    const auto* now = manifest.find(name);
    const auto* before = held.ok() ? held->find(name) : nullptr;
    std::error_code size_ec;
    if (before != nullptr && before->file == now->file && before->sha256 == now->sha256 &&
        before->bytes == now->bytes &&
        std::filesystem::file_size(out / now->file, size_ec) == now->bytes && !size_ec) {
      continue;
    }
    copied.push_back(name);
  }
  if (!copied.empty()) PRIVSEARCH_RETURN_IF_ERROR(verify_artifacts(index_dir, manifest, copied));
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec)
    return unavailable_error(fmt::format("cannot create `{}`: {}", out.string(), ec.message()));
  std::uint64_t written = 0;
  auto copy = [&](const std::string& file) -> Status {
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, read_file_bytes(index_dir / file));
    PRIVSEARCH_RETURN_IF_ERROR(write_bytes_atomically(out / file, bytes));
    written += bytes.size();
    return Status();
  };
  // Artifacts first, the manifest last (like a build: an interrupted copy never looks complete).
  for (const auto& name : copied) PRIVSEARCH_RETURN_IF_ERROR(copy(manifest.find(name)->file));
  if (std::filesystem::exists(index_dir / kManifestSignatureFile, ec)) {
    PRIVSEARCH_RETURN_IF_ERROR(copy(kManifestSignatureFile));
  } else {
    std::filesystem::remove(out / kManifestSignatureFile, ec);  // an older version's
  }
  PRIVSEARCH_RETURN_IF_ERROR(copy("manifest.json"));
  return written;
}

namespace {

// "pq.3" -> "pq": an update generation is as public as its base artifact.
std::string base_artifact_name(std::string name) {
  if (const auto dot = name.rfind('.');
      dot != std::string::npos && dot + 1 < name.size() &&
      name.find_first_not_of("0123456789", dot + 1) == std::string::npos) {
    name.resize(dot);
  }
  return name;
}

}  // namespace

Result<std::filesystem::path> public_index_file(const std::filesystem::path& dir,
                                                const std::string& file,
                                                const std::vector<std::string>& public_names) {
  if (file == "manifest.json" || file == kManifestSignatureFile) return dir / file;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto manifest, load_manifest(dir, /*verify=*/false));
  for (const auto& a : manifest.artifacts) {
    if (a.file != file) continue;
    const auto base = base_artifact_name(a.name);
    if (std::find(public_names.begin(), public_names.end(), base) != public_names.end()) {
      return dir / file;
    }
  }
  return Status(StatusCode::kNotFound, "no public index file " + file);
}

}  // namespace privsearch::index
