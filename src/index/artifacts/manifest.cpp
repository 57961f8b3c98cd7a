#include "index/artifacts/manifest.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/sha256.h"
#include "index/artifacts/atomic_file.h"
#include "index/artifacts/tombstones.h"

namespace privsearch::index {

namespace {

Result<std::pair<std::string, std::uint64_t>> hash_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return not_found_error(fmt::format("artifact `{}` is missing", file.string()));
  Sha256 h;
  std::vector<char> buf(1 << 20);
  std::uint64_t total = 0;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    h.update({reinterpret_cast<const std::uint8_t*>(buf.data()), got});
    total += got;
  }
  const auto digest = h.finish();
  return std::make_pair(to_hex(digest), total);
}

nlohmann::json body(const Manifest& m) {
  nlohmann::json j;
  j["format_version"] = m.format_version;
  j["collection"] = m.collection;
  j["encoder_id"] = m.encoder_id;
  j["projection"] = m.projection;
  j["dtype"] = m.dtype;
  j["documents"] = m.documents;
  j["input_dim"] = m.input_dim;
  j["dim"] = m.dim;
  j["pq_m"] = m.pq_m;
  j["seed"] = m.seed;
  if (m.sequence != 0) j["sequence"] = m.sequence;
  if (!m.parent_version.empty()) j["parent_version"] = m.parent_version;
  j["artifacts"] = nlohmann::json::array();
  for (const auto& a : m.artifacts) {
    j["artifacts"].push_back(
        {{"name", a.name}, {"file", a.file}, {"bytes", a.bytes}, {"sha256", a.sha256}});
  }
  return j;
}

std::string version_of(const Manifest& m) {
  const std::string canonical = body(m).dump();  // nlohmann sorts object keys
  return to_hex(
      sha256({reinterpret_cast<const std::uint8_t*>(canonical.data()), canonical.size()}));
}

}  // namespace

const ArtifactEntry* Manifest::find(const std::string& name) const {
  for (const auto& a : artifacts) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

Status write_manifest(const std::filesystem::path& dir, Manifest& m, bool keep_known_hashes) {
  for (auto& a : m.artifacts) {
    if (a.file.empty() || a.file.find("..") != std::string::npos || a.file.front() == '/') {
      return invalid_argument_error(
          fmt::format("artifact file `{}` must be a plain relative name", a.file));
    }
    if (keep_known_hashes && !a.sha256.empty()) continue;
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto hb, hash_file(dir / a.file));
    a.sha256 = hb.first;
    a.bytes = hb.second;
  }
  m.version_id = version_of(m);
  nlohmann::json j = body(m);
  j["version_id"] = m.version_id;
  const std::string text = j.dump(2) + "\n";
  return write_bytes_atomically(dir / "manifest.json",
                                {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
}

Result<Manifest> load_manifest(const std::filesystem::path& dir, bool verify) {
  const auto file = dir / "manifest.json";
  std::ifstream in(file);
  if (!in) return not_found_error(fmt::format("no manifest at `{}`", file.string()));
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return data_loss_error(fmt::format("`{}` is not valid JSON", file.string()));
  }
  Manifest m;
  try {
    m.format_version = j.at("format_version").get<int>();
    if (m.format_version != Manifest::kFormatVersion) {
      return failed_precondition_error(
          fmt::format("index format version {} (this build reads {}); rebuild the index",
                      m.format_version, Manifest::kFormatVersion));
    }
    m.collection = j.at("collection").get<std::string>();
    m.encoder_id = j.at("encoder_id").get<std::string>();
    m.projection = j.at("projection").get<std::string>();
    m.dtype = j.at("dtype").get<std::string>();
    m.documents = j.at("documents").get<std::uint64_t>();
    m.input_dim = j.at("input_dim").get<std::uint64_t>();
    m.dim = j.at("dim").get<std::uint64_t>();
    m.pq_m = j.at("pq_m").get<std::uint64_t>();
    m.seed = j.at("seed").get<std::uint64_t>();
    if (j.contains("sequence")) {
      m.sequence = j.at("sequence").get<std::uint64_t>();
      if (m.sequence == 0) return data_loss_error(fmt::format("`{}`: sequence 0", file.string()));
    }
    if (j.contains("parent_version")) {
      m.parent_version = j.at("parent_version").get<std::string>();
      if (m.parent_version.size() != 64 ||
          m.parent_version.find_first_not_of("0123456789abcdef") != std::string::npos) {
        return data_loss_error(
            fmt::format("`{}`: parent version is not a version id", file.string()));
      }
    }
    for (const auto& a : j.at("artifacts")) {
      m.artifacts.push_back({a.at("name").get<std::string>(), a.at("file").get<std::string>(),
                             a.at("bytes").get<std::uint64_t>(),
                             a.at("sha256").get<std::string>()});
    }
    m.version_id = j.at("version_id").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    return data_loss_error(fmt::format("`{}`: {}", file.string(), e.what()));
  }
  if (version_of(m) != m.version_id) {
    return data_loss_error(
        fmt::format("`{}`: version id does not match its contents", file.string()));
  }
  if (verify) PRIVSEARCH_RETURN_IF_ERROR(verify_artifacts(dir, m, {}));
  return m;
}

Status verify_artifacts(const std::filesystem::path& dir, const Manifest& m,
                        const std::vector<std::string>& names) {
  for (const auto& a : m.artifacts) {
    if (!names.empty() && std::find(names.begin(), names.end(), a.name) == names.end()) continue;
    if (a.file.find("..") != std::string::npos || (!a.file.empty() && a.file.front() == '/')) {
      return data_loss_error(fmt::format("artifact file `{}` escapes the index directory", a.file));
    }
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto hb, hash_file(dir / a.file));
    if (hb.second != a.bytes || hb.first != a.sha256) {
      return data_loss_error(fmt::format(
          "artifact `{}` ({}) does not match the manifest: {} bytes, SHA-256 {}..., expected {} "
          "bytes, {}...",
          a.name, a.file, hb.second, hb.first.substr(0, 12), a.bytes, a.sha256.substr(0, 12)));
    }
  }
  return Status();
}

std::string generation_artifact(std::string_view name, std::uint32_t generation) {
  return generation == 0 ? std::string(name) : fmt::format("{}.{}", name, generation);
}

std::uint32_t index_generations(const Manifest& manifest) {
  std::uint32_t g = 0;
  while (manifest.find(generation_artifact(kTombstonesArtifact, g + 1)) != nullptr) ++g;
  return g;
}

Status check_version(const Manifest& m, const std::string& expected) {
  if (m.version_id != expected) {
    return failed_precondition_error(fmt::format(
        "index version {}... differs from the peer's {}...; both sides must use the same build",
        m.version_id.substr(0, 12), expected.substr(0, 12)));
  }
  return Status();
}

}  // namespace privsearch::index
