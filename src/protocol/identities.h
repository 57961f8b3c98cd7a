// Client identities for budgets and rate limits: operator-issued bearer tokens.
//
// A client sends `authorization: Bearer <token>` in its gRPC metadata; the provider maps the
// token to an identity name through a tokens file the operator keeps:
//   # comment
//   <identity> <SHA-256 of the token, 64 hex digits>
// Only hashes are stored, so the file (and a log that names identities) reveals no token.
// `privsearch token new --identity NAME` mints a token and prints its line. Lookup hashes the
// presented token and compares digests, so its timing depends on the hash, never on the token.
// Why identities: without them a client mints a new key epoch (a new budget) at will; with
// them, budgets and rate limits follow the identity across epochs, reloads and restarts
// (docs/SECURITY.md, "Budgets").
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/sha256.h"
#include "core/status.h"

namespace privsearch::protocol {

class TokenRegistry {
 public:
  // kNotFound (no file), kInvalidArgument naming the line (malformed, a duplicate identity or
  // hash, an identity name outside [A-Za-z0-9._-]{1,64}).
  static Result<TokenRegistry> load(const std::filesystem::path& file);
  // The identity a presented token belongs to, if any.
  std::optional<std::string> identity_for(std::string_view token) const;
  std::size_t size() const { return by_hash_.size(); }

 private:
  std::map<Sha256Digest, std::string> by_hash_;
};

// A fresh token: "pst_" and 64 hex digits of the OS CSPRNG (256 bits).
std::string new_token();
// The tokens-file line for `identity` and `token`.
std::string token_line(std::string_view identity, std::string_view token);
// Whether `name` is a valid identity name.
bool valid_identity_name(std::string_view name);

}  // namespace privsearch::protocol
