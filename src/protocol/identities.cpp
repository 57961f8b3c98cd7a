#include "protocol/identities.h"

#include <fmt/format.h>

#include "core/bytes.h"
#include "core/csprng.h"
#include "index/artifacts/atomic_file.h"

namespace privsearch::protocol {
namespace {

bool parse_hex_digest(std::string_view hex, Sha256Digest& out) {
  if (hex.size() != 2 * out.size()) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

bool valid_identity_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Result<TokenRegistry> TokenRegistry::load(const std::filesystem::path& file) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, index::read_file_bytes(file));
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  TokenRegistry registry;
  std::map<std::string, int> names;
  std::size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    ++line_no;
    auto nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const auto line = trim(text.substr(pos, nl - pos));
    pos = nl + 1;
    if (line.empty() || line.front() == '#') continue;
    const auto sep = line.find_first_of(" \t");
    auto bad = [&](const char* why) {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("{} line {}: {} (expected `<identity> <sha256 hex>`)",
                                file.string(), line_no, why));
    };
    if (sep == std::string_view::npos) return bad("one field");
    const auto name = line.substr(0, sep);
    const auto hex = trim(line.substr(sep + 1));
    if (!valid_identity_name(name)) return bad("identity name outside [A-Za-z0-9._-]{1,64}");
    Sha256Digest digest{};
    if (!parse_hex_digest(hex, digest)) return bad("not a 64-digit hex SHA-256");
    if (!names.try_emplace(std::string(name), line_no).second) return bad("identity listed twice");
    if (!registry.by_hash_.try_emplace(digest, std::string(name)).second) {
      return bad("token hash listed twice");
    }
  }
  return registry;
}

std::optional<std::string> TokenRegistry::identity_for(std::string_view token) const {
  const auto it = by_hash_.find(sha256(byte_view(token)));
  if (it == by_hash_.end()) return std::nullopt;
  return it->second;
}

std::string new_token() {
  std::array<std::uint8_t, 32> raw{};
  Prng prng = Prng::create();
  prng.fill(raw);
  std::string token = "pst_" + to_hex(raw);
  raw.fill(0);
  return token;
}

std::string token_line(std::string_view identity, std::string_view token) {
  return fmt::format("{} {}", identity, to_hex(sha256(byte_view(token))));
}

}  // namespace privsearch::protocol
