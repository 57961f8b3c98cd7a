// `privsearch update`: add documents to an index and delete others without a rebuild
// (index/artifacts/append.h): new segments, tombstones, a new (signed) manifest.
#include <fmt/format.h>

#include <fstream>
#include <optional>

#include "commands/command.h"
#include "index/artifacts/append.h"
#include "index/artifacts/artifact_names.h"
#include "index/encoders/beir.h"
#include "index/encoders/lexical_encoder.h"
#include "index/vectors_io.h"
#include "version/index_version.h"

namespace privsearch::tools {
namespace {

// The non-blank, non-comment lines of a file, trimmed (an id file: one document id a line).
Result<std::vector<std::string>> read_id_lines(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return not_found_error(fmt::format("cannot read `{}`", file.string()));
  std::vector<std::string> ids;
  std::string line;
  while (std::getline(in, line)) {
    const auto start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] == '#') continue;
    const auto end = line.find_last_not_of(" \t\r");
    ids.push_back(line.substr(start, end - start + 1));
  }
  return ids;
}

// One row number of the index per line; blank lines and #-comments skipped.
Result<std::vector<std::uint64_t>> read_rows(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return not_found_error(fmt::format("cannot read `{}`", file.string()));
  std::vector<std::uint64_t> ids;
  std::string line;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    const auto start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] == '#') continue;
    std::size_t used = 0;
    try {
      ids.push_back(std::stoull(line.substr(start), &used));
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || line.find_first_not_of(" \t\r", start + used) != std::string::npos) {
      return invalid_argument_error(
          fmt::format("`{}` line {}: not a row number", file.string(), n));
    }
  }
  return ids;
}

// The new documents' embeddings: the given file, else the index's built-in lexical encoder
// (fixed like the projection: its BM25 statistics stay those of the build).
Result<index::Matrix> new_vectors(const std::filesystem::path& dir,
                                  const std::filesystem::path& vectors_file,
                                  const std::vector<index::Document>& docs) {
  if (!vectors_file.empty()) return index::load_vectors(vectors_file);
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto current,
                              version::IndexVersion::open(dir, version::tool_spec()));
  if (current.manifest().find(index::kEncoderArtifact) == nullptr ||
      !current.manifest().encoder_id.starts_with("lexical")) {
    return invalid_argument_error(
        "this index was not built with the built-in lexical encoder: give the new documents' "
        "embeddings with --doc-vectors (same model as the build)");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto file, current.verified_path(index::kEncoderArtifact));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto encoder, index::LexicalEncoder::load(file));
  index::Matrix m;
  m.rows = docs.size();
  m.cols = encoder.dim();
  m.data.reserve(m.rows * m.cols);
  for (const auto& d : docs) {
    const auto v = encoder.encode_document(d.title + " " + d.text);
    m.data.insert(m.data.end(), v.begin(), v.end());
  }
  return m;
}

}  // namespace

namespace {

struct UpdateOptions {
  std::filesystem::path index, documents, vectors, delete_file, delete_rows_file, signing_key;
  std::vector<std::string> delete_ids;
  bool drop_access_private = false;
};

// What the update adds and deletes, read and encoded (the new documents' vectors).
Result<index::AppendInput> update_input(const UpdateOptions& o) {
  index::AppendInput input;
  input.drop_access_private = o.drop_access_private;
  if (!o.documents.empty()) {
    auto docs = index::load_corpus(o.documents);
    if (!docs.ok()) return docs.status();
    input.documents = std::move(docs).value();
    auto vectors = new_vectors(o.index, o.vectors, input.documents);
    if (!vectors.ok()) return vectors.status();
    input.vectors = std::move(vectors).value();
  } else if (!o.vectors.empty()) {
    return invalid_argument_error("--doc-vectors needs --documents");
  }
  input.delete_ids = o.delete_ids;
  if (!o.delete_file.empty()) {
    auto ids = read_id_lines(o.delete_file);
    if (!ids.ok()) return ids.status();
    input.delete_ids.insert(input.delete_ids.end(), ids->begin(), ids->end());
  }
  if (!o.delete_rows_file.empty()) {
    auto rows = read_rows(o.delete_rows_file);
    if (!rows.ok()) return rows.status();
    input.deleted = std::move(rows).value();
  }
  return input;
}

int run_update(const UpdateOptions& o) {
  std::optional<index::Ed25519SigningKey> key;
  if (!o.signing_key.empty()) {
    auto k = index::Ed25519SigningKey::load(o.signing_key);
    if (!k.ok()) return fail(k.status(), "update");
    key.emplace(std::move(k).value());
  }
  auto input = update_input(o);
  if (!input.ok()) return fail(input.status(), "update");
  if (!key) {
    // An index that does not open is refused by append_to_index below, with its reason.
    const auto current = version::IndexVersion::open(o.index, version::tool_spec());
    if (current.ok() && current->manifest().sequence > 0) {
      fmt::print(stderr,
                 "privsearch update: warning: {} is a signed version (sequence {}) and "
                 "no --signing-key was given: the update is unsigned, and clients "
                 "that pin the key will refuse it\n",
                 o.index.string(), current->manifest().sequence);
    }
  }
  const Progress progress;
  auto result = index::append_to_index(o.index, *input, key ? &*key : nullptr, progress.callback());
  if (!result.ok()) return fail(result.status(), "update");
  fmt::print(
      "index {} updated to generation {}: {} documents added, {} deleted ({} of them replaced "
      "by a new document of the same id), {} rows in all; version {}{}\n",
      o.index.string(), result->generation, result->appended, result->deleted, result->replaced,
      result->manifest.documents, result->manifest.version_id.substr(0, 16),
      key ? fmt::format(" (signed, sequence {})", result->manifest.sequence)
          : std::string(" (unsigned)"));
  fmt::print("a client copies {} bytes (flat) or {} bytes (IVF) to update\n",
             result->flat_client_bytes, result->ivf_client_bytes);
  return 0;
}

}  // namespace

Command add_update_command(CLI::App& parent) {
  auto* cmd = parent.add_subcommand(
      "update",
      "Add documents to an index and delete others without a rebuild: new segments (exact rows, "
      "payloads, PQ codes, IVF list additions) and tombstones beside the untouched old files, "
      "then a new manifest (signed as the next version with --signing-key). The projection, "
      "codebooks and encoder stay fixed; a provider picks the version up on reload (SIGHUP) and "
      "keeps answering the old one for stale clients; clients copy only the new files "
      "(client-files into their directory)");
  auto o = std::make_shared<UpdateOptions>();
  cmd->add_option("--index", o->index, "Index directory to update in place")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--documents", o->documents,
                  "New documents, BEIR corpus.jsonl format (_id, title, text); they get the next "
                  "rows in file order. A document whose _id the index holds replaces it (upsert); "
                  "an _id twice in the file is refused")
      ->check(CLI::ExistingFile);
  cmd->add_option("--doc-vectors", o->vectors,
                  "Their embeddings (.npy or .fvecs, one row per document, the build's model); "
                  "default: the index's built-in lexical encoder")
      ->check(CLI::ExistingFile);
  cmd->add_option("--delete", o->delete_ids,
                  "Document ids (the corpus _id) to delete: they are never returned or scored by "
                  "the new version, and their payload records are emptied; an id that names no "
                  "live document is refused");
  cmd->add_option("--delete-file", o->delete_file,
                  "A file of document ids to delete, one per line (# comments)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--delete-rows", o->delete_rows_file,
                  "A file of row numbers to delete, one per line (an index built before document "
                  "ids)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--signing-key", o->signing_key,
                  "Sign the new version with this key (keygen-signing): sequence + 1, parent = "
                  "the current version")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--drop-access-private", o->drop_access_private,
                "Update an index that has access-private scoring by leaving that mode out of the "
                "new version (its layout covers every document; rebuild to restore it)");
  return {cmd, [o] { return run_update(*o); }};
}

}  // namespace privsearch::tools
