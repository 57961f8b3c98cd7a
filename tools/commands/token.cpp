// `privsearch token new --identity NAME`: mints a bearer token for a client of a provider that
// runs with --auth-tokens, writes it (owner-only) where the client will read it, and prints the
// line the operator appends to the provider's tokens file (identity and SHA-256, never the token).
#include <fmt/format.h>
#include <sys/stat.h>

#include <filesystem>
#include <memory>
#include <string>

#include "commands/command.h"
#include "core/bytes.h"
#include "index/artifacts/atomic_file.h"
#include "protocol/identities.h"

namespace privsearch::tools {
namespace {

struct TokenArgs {
  std::string identity;
  std::filesystem::path out;
};

int run_token(const TokenArgs& a) {
  if (!protocol::valid_identity_name(a.identity)) {
    return fail(Status(StatusCode::kInvalidArgument,
                       "--identity `" + a.identity + "`: use 1-64 of [A-Za-z0-9._-]"),
                "token");
  }
  if (std::filesystem::exists(a.out)) {
    return fail(Status(StatusCode::kInvalidArgument,
                       a.out.string() + " exists; a token is never overwritten"),
                "token");
  }
  const std::string token = protocol::new_token();
  const mode_t old = ::umask(077);  // the token file is readable by its owner only
  const Status s = index::write_bytes_atomically(a.out, byte_view(token + "\n"));
  ::umask(old);
  if (!s.ok()) return fail(s, "token");
  fmt::print("token for `{}` written to {} (give it to the client: search --token-file)\n",
             a.identity, a.out.string());
  fmt::print("append this line to the provider's --auth-tokens file:\n{}\n",
             protocol::token_line(a.identity, token));
  return 0;
}

}  // namespace

Command add_token_command(CLI::App& parent) {
  auto* cmd = parent.add_subcommand(
      "token", "Client identities for providers started with --auth-tokens (bearer tokens)");
  auto* mint = cmd->add_subcommand(
      "new", "Mint a token: written owner-only to --out; prints the provider's tokens-file line");
  cmd->require_subcommand(1);
  auto a = std::make_shared<TokenArgs>();
  mint->add_option("--identity", a->identity, "Identity name ([A-Za-z0-9._-], 1-64)")->required();
  mint->add_option("--out", a->out, "Where the token goes (must not exist)")->required();
  return {cmd, [a] { return run_token(*a); }};
}

}  // namespace privsearch::tools
