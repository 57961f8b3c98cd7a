// manifest.sig's format and the checks that need no cryptography (manifest_signature.h): kept
// apart from signing and verifying (OpenSSL) so the WebAssembly client compiles the same parser
// and the same claim checks, and only the Ed25519 verification is the browser's (WebCrypto).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/sha256.h"
#include "index/artifacts/manifest_signature.h"

namespace privsearch::index {
namespace {

constexpr int kSignatureFormat = 1;
constexpr std::string_view kDomain = "privsearch manifest signature v1\n";

bool is_lower_hex(std::string_view s, std::size_t length) {
  return s.size() == length && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

int hex_value(char c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

}  // namespace

std::vector<std::uint8_t> manifest_signature_message(std::string_view version_id) {
  const std::string text = std::string(kDomain) + std::string(version_id);
  return {text.begin(), text.end()};
}

std::string ed25519_key_id(std::span<const std::uint8_t> raw) {
  return to_hex(sha256(raw)).substr(0, 16);
}

Status check_signature_claims(const ManifestSignature& s, const Manifest& manifest,
                              std::string_view pinned_key_id, std::string_view where) {
  if (s.key_id != pinned_key_id) {
    return unauthenticated_error(
        fmt::format("index `{}` is signed by key {}, not by the pinned key {}", where, s.key_id,
                    pinned_key_id));
  }
  if (s.version_id != manifest.version_id || s.sequence != manifest.sequence) {
    return unauthenticated_error(fmt::format(
        "index `{}`: the signature is for version {}... (sequence {}), the manifest is {}... "
        "(sequence {})",
        where, s.version_id.substr(0, 12), s.sequence, manifest.version_id.substr(0, 12),
        manifest.sequence));
  }
  return Status();
}

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

}  // namespace privsearch::index
