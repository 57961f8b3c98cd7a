#include "index/artifacts/manifest_signature.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/sha256.h"
#include "index/artifacts/atomic_file.h"

namespace privsearch::index {
namespace {

constexpr int kSignatureFormat = 1;
constexpr std::string_view kDomain = "privsearch manifest signature v1\n";

std::vector<std::uint8_t> signed_message(std::string_view version_id) {
  const std::string text = std::string(kDomain) + std::string(version_id);
  return {text.begin(), text.end()};
}

bool is_lower_hex(std::string_view s, std::size_t length) {
  return s.size() == length && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

int hex_value(char c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

}  // namespace

std::string serialize_manifest_signature(const ManifestSignature& s) {
  nlohmann::json j;
  j["format"] = kSignatureFormat;
  j["algorithm"] = "ed25519";
  j["key_id"] = s.key_id;
  j["version_id"] = s.version_id;
  j["sequence"] = s.sequence;
  j["signature"] = to_hex(s.signature);
  return j.dump(2) + "\n";
}

Result<ManifestSignature> parse_manifest_signature(std::string_view text) {
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return data_loss_error("manifest signature: not a JSON object");
  }
  static constexpr const char* kFields[] = {"format",     "algorithm", "key_id",
                                            "version_id", "sequence",  "signature"};
  if (j.size() != std::size(kFields)) {
    return data_loss_error(
        fmt::format("manifest signature: {} fields, expected {}", j.size(), std::size(kFields)));
  }
  for (const char* f : kFields) {
    if (!j.contains(f)) return data_loss_error(fmt::format("manifest signature: no `{}`", f));
  }
  if (!j["format"].is_number_integer() || j["format"].get<std::int64_t>() != kSignatureFormat) {
    return data_loss_error("manifest signature: unknown format (this build reads 1)");
  }
  if (!j["algorithm"].is_string() || j["algorithm"].get<std::string>() != "ed25519") {
    return data_loss_error("manifest signature: unknown algorithm (ed25519 expected)");
  }
  if (!j["sequence"].is_number_unsigned()) {
    return data_loss_error("manifest signature: sequence is not an unsigned integer");
  }
  for (const char* f : {"key_id", "version_id", "signature"}) {
    if (!j[f].is_string())
      return data_loss_error(fmt::format("manifest signature: `{}` is not text", f));
  }
  ManifestSignature s;
  s.key_id = j["key_id"].get<std::string>();
  s.version_id = j["version_id"].get<std::string>();
  s.sequence = j["sequence"].get<std::uint64_t>();
  const auto sig = j["signature"].get<std::string>();
  if (!is_lower_hex(s.key_id, 16) || !is_lower_hex(s.version_id, 64) ||
      !is_lower_hex(sig, 2 * kEd25519SignatureBytes)) {
    return data_loss_error(
        "manifest signature: key id, version id or signature of the wrong length or not hex");
  }
  for (std::size_t i = 0; i < kEd25519SignatureBytes; ++i) {
    s.signature[i] =
        static_cast<std::uint8_t>(hex_value(sig[2 * i]) * 16 + hex_value(sig[2 * i + 1]));
  }
  return s;
}

ManifestSignature sign_manifest(const Manifest& manifest, const Ed25519SigningKey& key) {
  ManifestSignature s;
  s.key_id = key.public_key().key_id();
  s.version_id = manifest.version_id;
  s.sequence = manifest.sequence;
  s.signature = key.sign(signed_message(manifest.version_id));
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
  if (s.key_id != trusted.key_id()) {
    return unauthenticated_error(
        fmt::format("index `{}` is signed by key {}, not by the pinned key {}", dir.string(),
                    s.key_id, trusted.key_id()));
  }
  if (s.version_id != manifest.version_id || s.sequence != manifest.sequence) {
    return unauthenticated_error(fmt::format(
        "index `{}`: the signature is for version {}... (sequence {}), the manifest is {}... "
        "(sequence {})",
        dir.string(), s.version_id.substr(0, 12), s.sequence, manifest.version_id.substr(0, 12),
        manifest.sequence));
  }
  if (!trusted.verify(signed_message(manifest.version_id), s.signature)) {
    return unauthenticated_error(
        fmt::format("index `{}`: the manifest signature does not verify under key {}", dir.string(),
                    trusted.key_id()));
  }
  return Status();
}

}  // namespace privsearch::index
