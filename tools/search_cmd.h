// `privsearch search`: the client side of a private search from the command line.
#pragma once

#include <CLI/CLI.hpp>

namespace privsearch::tools {

// Registers the subcommand; returns a runner to call when it was parsed.
struct SearchCommand {
  CLI::App* cmd = nullptr;
  int run() const;
};
SearchCommand add_search_command(CLI::App& app);

}  // namespace privsearch::tools
