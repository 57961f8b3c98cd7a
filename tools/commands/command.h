// The command registry of `privsearch`: each subcommand lives in its own file under
// tools/commands/, registers its options on the parent CLI11 app and returns how to run it.
// tools/privsearch.cpp only lists the commands, parses, and runs the one that was chosen.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "core/status.h"
#include "experiments/report_html.h"
#include "harness/progress.h"
#include "index/artifacts/manifest.h"
#include "index/artifacts/signing_key.h"

namespace privsearch::tools {

struct Command {
  CLI::App* app = nullptr;   // the subcommand, owned by the parent app
  std::function<int()> run;  // called once when `app` was parsed; the process exit code
};

using AddCommand = Command (*)(CLI::App& parent);

// In the order `privsearch --help` lists them.
Command add_params_command(CLI::App& parent);
Command add_build_command(CLI::App& parent);
Command add_update_command(CLI::App& parent);
Command add_eval_command(CLI::App& parent);
Command add_import_word_vectors_command(CLI::App& parent);
Command add_serve_command(CLI::App& parent);
Command add_search_command(CLI::App& parent);
Command add_audit_command(CLI::App& parent);
Command add_bench_command(CLI::App& parent);
Command add_token_command(CLI::App& parent);
Command add_cluster_command(CLI::App& parent);
Command add_keygen_signing_command(CLI::App& parent);
Command add_sign_command(CLI::App& parent);
Command add_client_files_command(CLI::App& parent);

// The line `sign` and `build --signing-key` print for a signed index (commands/signing.cpp).
std::string signed_summary(const std::filesystem::path& dir, const index::Manifest& manifest,
                           const index::Ed25519SigningKey& key);

// "privsearch[ <command>]: <status>" on stderr; returns the exit code 1.
int fail(const Status& status, const std::string& command = "");

// The end of `eval` and `audit`: the HTML page when `html` is set (written atomically), then the
// report's JSON on stdout. The exit code.
template <typename Report>
int write_and_print(const Report& report, const std::filesystem::path& html,
                    const Progress& progress, const std::string& command) {
  if (!html.empty()) {
    if (auto st = write_report_html(html, report); !st.ok()) return fail(st, command);
    progress("report written to " + html.string());
  }
  std::cout << report.to_json().dump(2) << std::endl;
  return 0;
}

}  // namespace privsearch::tools
