// Signed manifests: the operator's Ed25519 key (index/artifacts/signing_key.h) signs a manifest's
// version id, which is the SHA-256 of the canonical manifest, which holds the SHA-256 of every
// artifact and the version chain (sequence, parent). One signature therefore covers every byte a
// client reads. A client that pins the operator's public key refuses an index without a signature,
// with a signature by another key or over another version, and (client/trusted_index.h) a sequence
// older than one it has seen.
//
// manifest.sig (next to manifest.json, written atomically) is JSON:
//   {"format": 1, "algorithm": "ed25519", "key_id": <16 hex>, "version_id": <64 hex>,
//    "sequence": <u64>, "signature": <128 hex>}
// over the message  "privsearch manifest signature v1\n" || version_id (hex text); the
// domain-separating prefix keeps this key's signatures from meaning anything elsewhere.
// Thread safety: pure functions (apart from the files they read and write).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "index/artifacts/manifest.h"
#include "index/artifacts/signing_key.h"

namespace privsearch::index {

inline constexpr const char* kManifestSignatureFile = "manifest.sig";

struct ManifestSignature {
  std::string key_id;
  std::string version_id;
  std::uint64_t sequence = 0;
  Ed25519Signature signature{};
};

std::string serialize_manifest_signature(const ManifestSignature& s);
// kDataLoss for anything but the exact shape above (unknown format or algorithm, wrong lengths,
// non-hex, missing or extra fields).
Result<ManifestSignature> parse_manifest_signature(std::string_view text);

// What is signed: the domain prefix and the version id's hex text.
std::vector<std::uint8_t> manifest_signature_message(std::string_view version_id);
// First 16 hex digits of SHA-256 of a raw Ed25519 public key: how files and messages name it.
std::string ed25519_key_id(std::span<const std::uint8_t> raw);
// The signature's claims against `manifest` and the pinned key's id, before any cryptography:
// kUnauthenticated for another key, version or sequence (`where` names the index in the text).
Status check_signature_claims(const ManifestSignature& s, const Manifest& manifest,
                              std::string_view pinned_key_id, std::string_view where);

// The signature of `manifest` (its version id must be set) by `key`.
ManifestSignature sign_manifest(const Manifest& manifest, const Ed25519SigningKey& key);
// Writes dir/manifest.sig for `manifest`.
Status write_manifest_signature(const std::filesystem::path& dir, const Manifest& manifest,
                                const Ed25519SigningKey& key);
// What `privsearch sign` (and `build --signing-key`) does: re-hashes every artifact of the index
// in `dir`, sets the version chain (sequence: `sequence` when given, else the parent's + 1 when
// `parent_dir` is given, else the current one, else 1; parent_version: the parent's id),
// rewrites manifest.json when the chain changed (the version id changes with it) and writes
// manifest.sig. kInvalidArgument for a sequence not after the parent's. Returns the manifest.
Result<Manifest> sign_index(const std::filesystem::path& dir, const Ed25519SigningKey& key,
                            const std::filesystem::path& parent_dir = {},
                            std::optional<std::uint64_t> sequence = std::nullopt);

// Reads dir/manifest.sig and checks it against `manifest` and the pinned key:
//   kNotFound         no manifest.sig (an unsigned index)
//   kDataLoss         a damaged signature file
//   kUnauthenticated  signed by another key, for another version or sequence, or a signature
//                     that does not verify
Status verify_manifest_signature(const std::filesystem::path& dir, const Manifest& manifest,
                                 const Ed25519PublicKey& trusted);

}  // namespace privsearch::index
