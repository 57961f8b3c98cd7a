#include "client/trusted_index.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "client/core/trust_check.h"
#include "index/artifacts/atomic_file.h"
#include "index/artifacts/manifest_signature.h"
#include "index/artifacts/signing_key.h"

namespace privsearch::client {
namespace {

constexpr int kMemoryFormat = 1;

Result<nlohmann::json> read_memory(const std::filesystem::path& file) {
  if (!std::filesystem::exists(file)) {
    return nlohmann::json{{"format", kMemoryFormat}, {"keys", nlohmann::json::object()}};
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, index::read_file_bytes(file));
  auto j = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
  const auto damaged = [&](std::string_view why) {
    return data_loss_error(fmt::format(
        "the memory of seen index versions `{}` is damaged ({}); refusing rather than forgetting "
        "what was seen (remove it only if you accept any older signed index again)",
        file.string(), why));
  };
  if (j.is_discarded() || !j.is_object()) return damaged("not a JSON object");
  if (!j.contains("format") || j["format"] != kMemoryFormat) return damaged("unknown format");
  if (!j.contains("keys") || !j["keys"].is_object()) return damaged("no key table");
  for (const auto& [key_id, entry] : j["keys"].items()) {
    if (!entry.is_object() || !entry.contains("sequence") ||
        !entry["sequence"].is_number_unsigned() || !entry.contains("version_id") ||
        !entry["version_id"].is_string()) {
      return damaged("entry of key " + key_id);
    }
  }
  return j;
}

}  // namespace

std::filesystem::path default_seen_versions_path() {
  if (const char* dir = std::getenv("PRIVSEARCH_STATE_DIR"); dir != nullptr && *dir != '\0') {
    return std::filesystem::path(dir) / "seen-manifests.json";
  }
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home != nullptr ? home : ".") / ".local/state/privsearch" /
         "seen-manifests.json";
}

Status check_index_trust(const std::filesystem::path& index_dir, const index::Manifest& manifest,
                         const IndexTrust& trust) {
  if (trust.public_key.empty()) return Status();
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto key, index::Ed25519PublicKey::load(trust.public_key));
  PRIVSEARCH_RETURN_IF_ERROR(index::verify_manifest_signature(index_dir, manifest, key));
  const auto file =
      trust.seen_versions.empty() ? default_seen_versions_path() : trust.seen_versions;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto lock, index::FileLock::acquire(file));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto memory, read_memory(file));
  auto& keys = memory["keys"];
  const std::string key_id = key.key_id();
  std::optional<core::SeenVersion> seen;
  if (keys.contains(key_id)) {
    seen = core::SeenVersion{keys[key_id]["sequence"].get<std::uint64_t>(),
                             keys[key_id]["version_id"].get<std::string>()};
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(
      const bool newer, core::check_seen_version({manifest.sequence, manifest.version_id}, seen,
                                                 key_id, index_dir.string()));
  if (!newer) return Status();
  keys[key_id] = {{"sequence", manifest.sequence}, {"version_id", manifest.version_id}};
  const std::string text = memory.dump(2) + "\n";
  return index::write_bytes_atomically(
      file, {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
}

}  // namespace privsearch::client
