#include "index/artifacts/manifest_signature.h"

#include <fmt/format.h>

#include "index/artifacts/atomic_file.h"

namespace privsearch::index {

ManifestSignature sign_manifest(const Manifest& manifest, const Ed25519SigningKey& key) {
  ManifestSignature s;
  s.key_id = key.public_key().key_id();
  s.version_id = manifest.version_id;
  s.sequence = manifest.sequence;
  s.signature = key.sign(manifest_signature_message(manifest.version_id));
  return s;
}

Status write_manifest_signature(const std::filesystem::path& dir, const Manifest& manifest,
                                const Ed25519SigningKey& key) {
  if (manifest.version_id.empty())
    return invalid_argument_error("sign: manifest without a version id");
  const auto text = serialize_manifest_signature(sign_manifest(manifest, key));
  return write_bytes_atomically(dir / kManifestSignatureFile,
                                {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
}

Result<Manifest> sign_index(const std::filesystem::path& dir, const Ed25519SigningKey& key,
                            const std::filesystem::path& parent_dir,
                            std::optional<std::uint64_t> sequence) {
  // The signature vouches for every artifact: re-hash them all first.
  PRIVSEARCH_ASSIGN_OR_RETURN(auto manifest, load_manifest(dir, /*verify=*/true));
  std::uint64_t next = manifest.sequence != 0 ? manifest.sequence : 1;
  std::string parent_version = manifest.parent_version;
  if (!parent_dir.empty()) {
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto parent, load_manifest(parent_dir, /*verify=*/false));
    if (sequence && *sequence <= parent.sequence) {
      return invalid_argument_error(
          fmt::format("sequence {} is not after the parent's {}", *sequence, parent.sequence));
    }
    next = parent.sequence + 1;
    parent_version = parent.version_id;
  }
  if (sequence) next = *sequence;
  if (next == 0) return invalid_argument_error("the version sequence starts at 1");
  if (next != manifest.sequence || parent_version != manifest.parent_version) {
    // The chain is part of the version id: rewrite the manifest (artifacts unchanged).
    manifest.sequence = next;
    manifest.parent_version = parent_version;
    PRIVSEARCH_RETURN_IF_ERROR(write_manifest(dir, manifest));
  }
  PRIVSEARCH_RETURN_IF_ERROR(write_manifest_signature(dir, manifest, key));
  return manifest;
}

Status verify_manifest_signature(const std::filesystem::path& dir, const Manifest& manifest,
                                 const Ed25519PublicKey& trusted) {
  const auto file = dir / kManifestSignatureFile;
  if (!std::filesystem::exists(file)) {
    return not_found_error(
        fmt::format("index `{}` is unsigned (no {}) but a signing key is pinned: refusing it",
                    dir.string(), kManifestSignatureFile));
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, read_file_bytes(file));
  auto parsed = parse_manifest_signature(
      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  if (!parsed.ok()) return parsed.status().with_context(file.string());
  const auto& s = *parsed;
  PRIVSEARCH_RETURN_IF_ERROR(check_signature_claims(s, manifest, trusted.key_id(), dir.string()));
  if (!trusted.verify(manifest_signature_message(manifest.version_id), s.signature)) {
    return unauthenticated_error(
        fmt::format("index `{}`: the manifest signature does not verify under key {}", dir.string(),
                    trusted.key_id()));
  }
  return Status();
}

}  // namespace privsearch::index
