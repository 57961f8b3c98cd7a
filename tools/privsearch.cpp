// The privsearch command line: one file per subcommand under tools/commands/; this file lists
// them, parses, and runs the one that was chosen. See `privsearch --help`.
#include <malloc.h>

#include <CLI/CLI.hpp>

#include "commands/command.h"

int main(int argc, char** argv) {
  // Keep freed polynomial buffers in the heap: returning them to the OS and faulting them back
  // in costs ~8% of a rotation (measured with perf).
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  CLI::App app{
      "privsearch: privacy-aware semantic search.\n"
      "The client finds candidates in a public index locally (PQ, or IVF lists fetched in the\n"
      "clear or by PIR) and has them scored under encryption: CKKS rerank of candidate IDs, or,\n"
      "with --access-private, LWE scoring of whole clusters that names no document. The\n"
      "provider never sees the query, the scores or the ranking; documents are read by\n"
      "hintless PIR (or ZipPIR), so it does not learn which either."};
  app.set_version_flag("--version", "privsearch " PRIVSEARCH_VERSION);
  app.require_subcommand(1);
  namespace tools = privsearch::tools;
  const tools::AddCommand registry[] = {
      tools::add_params_command,
      tools::add_build_command,
      tools::add_update_command,
      tools::add_eval_command,
      tools::add_import_word_vectors_command,
      tools::add_serve_command,
      tools::add_search_command,
      tools::add_audit_command,
      tools::add_bench_command,
      tools::add_token_command,
      tools::add_cluster_command,
      tools::add_keygen_signing_command,
      tools::add_sign_command,
      tools::add_client_files_command,
  };
  std::vector<tools::Command> commands;
  for (const auto add : registry) commands.push_back(add(app));
  CLI11_PARSE(app, argc, argv);
  for (const auto& c : commands) {
    if (c.app->parsed()) return c.run();
  }
  return 1;  // unreachable: require_subcommand(1)
}
