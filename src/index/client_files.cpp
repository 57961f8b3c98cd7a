#include "index/client_files.h"

#include <fmt/format.h>

#include "index/atomic_file.h"
#include "index/manifest.h"
#include "index/manifest_signature.h"

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
  PRIVSEARCH_RETURN_IF_ERROR(verify_artifacts(index_dir, manifest, names));
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) return unavailable_error(fmt::format("cannot create `{}`: {}", out.string(), ec.message()));
  std::uint64_t written = 0;
  auto copy = [&](const std::string& file) -> Status {
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, read_file_bytes(index_dir / file));
    PRIVSEARCH_RETURN_IF_ERROR(write_bytes_atomically(out / file, bytes));
    written += bytes.size();
    return Status();
  };
  // Artifacts first, the manifest last (like a build: an interrupted copy never looks complete).
  for (const auto& name : names) PRIVSEARCH_RETURN_IF_ERROR(copy(manifest.find(name)->file));
  if (std::filesystem::exists(index_dir / kManifestSignatureFile, ec)) {
    PRIVSEARCH_RETURN_IF_ERROR(copy(kManifestSignatureFile));
  }
  PRIVSEARCH_RETURN_IF_ERROR(copy("manifest.json"));
  return written;
}

}  // namespace privsearch::index
