// `privsearch keygen-signing` and `privsearch sign`: the operator's Ed25519 key and signed index
// versions (index/artifacts/manifest_signature.h). Clients pin the public key (`search
// --trust-key`) and then refuse unsigned, foreign, tampered and rolled-back indexes
// (client/trusted_index.h).
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "commands/command.h"
#include "index/artifacts/manifest.h"
#include "index/artifacts/manifest_signature.h"
#include "index/artifacts/signing_key.h"

namespace privsearch::tools {

std::string signed_summary(const std::filesystem::path& dir, const index::Manifest& manifest,
                           const index::Ed25519SigningKey& key) {
  return fmt::format(
      "signed {} as version {} (sequence {}{}) with key {}\n", dir.string(),
      manifest.version_id.substr(0, 16), manifest.sequence,
      manifest.parent_version.empty() ? "" : ", parent " + manifest.parent_version.substr(0, 16),
      key.public_key().key_id());
}

namespace {

struct KeygenArgs {
  std::filesystem::path out;
};

int run_keygen(const KeygenArgs& a) {
  const auto pub = std::filesystem::path(a.out.string() + ".pub");
  if (std::filesystem::exists(a.out) || std::filesystem::exists(pub)) {
    return fail(
        failed_precondition_error(fmt::format("{} or {} exists; a signing key is never overwritten",
                                              a.out.string(), pub.string())),
        "keygen-signing");
  }
  auto key = index::Ed25519SigningKey::generate();
  if (!key.ok()) return fail(key.status(), "keygen-signing");
  if (auto s = key->save(a.out); !s.ok()) return fail(s, "keygen-signing");
  if (auto s = key->public_key().save(pub); !s.ok()) return fail(s, "keygen-signing");
  fmt::print("signing key {} written to {} (owner-only; keep it off the provider)\n",
             key->public_key().key_id(), a.out.string());
  fmt::print("public key written to {} (give it to clients: search --trust-key {})\n", pub.string(),
             pub.filename().string());
  return 0;
}

struct SignArgs {
  std::filesystem::path index_dir, key_file, parent_dir;
  std::optional<std::uint64_t> sequence;
};

Result<std::string> sign(const SignArgs& a) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto key, index::Ed25519SigningKey::load(a.key_file));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto manifest,
                              index::sign_index(a.index_dir, key, a.parent_dir, a.sequence));
  return signed_summary(a.index_dir, manifest, key);
}

}  // namespace

Command add_keygen_signing_command(CLI::App& parent) {
  auto* cmd = parent.add_subcommand(
      "keygen-signing",
      "Create the operator's Ed25519 key that signs index versions: the secret key at --out "
      "(owner-only) and its public key at <out>.pub for clients to pin");
  auto a = std::make_shared<KeygenArgs>();
  cmd->add_option("--out", a->out, "Secret key file (PEM; must not exist)")->required();
  return {cmd, [a] { return run_keygen(*a); }};
}

Command add_sign_command(CLI::App& parent) {
  auto* cmd = parent.add_subcommand(
      "sign",
      "Sign an index version: re-hashes every artifact, sets the version chain (sequence, "
      "parent) in manifest.json and writes manifest.sig. Sign before starting the provider "
      "(the chain is part of the version id)");
  auto a = std::make_shared<SignArgs>();
  cmd->add_option("--index", a->index_dir, "Index directory")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--key", a->key_file, "Secret key from keygen-signing")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--parent", a->parent_dir,
                  "The index version this one replaces: sequence = the parent's + 1")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--sequence", a->sequence,
                  "Version sequence number (default: the parent's + 1, else the current one, "
                  "else 1); clients refuse any sequence older than one they have seen");
  return {cmd, [a] {
            auto r = sign(*a);
            if (!r.ok()) return fail(r.status(), "sign");
            fmt::print("{}", *r);
            return 0;
          }};
}

}  // namespace privsearch::tools
