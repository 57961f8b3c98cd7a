// `privsearch serve ...`: replaces this process with privsearch-provider from the same
// directory, so the serving process never contains the client's secret-key code.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "commands/command.h"
#include "harness/spawned_provider.h"

namespace privsearch::tools {
namespace {

int exec_provider(const std::vector<std::string>& args) {
  const auto provider = provider_beside_this_executable();
  std::vector<char*> argv{const_cast<char*>(provider.c_str())};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(provider.c_str(), argv.data());
  std::fprintf(stderr, "privsearch serve: cannot run %s: %s\n", provider.c_str(),
               std::strerror(errno));
  return 1;
}

}  // namespace

Command add_serve_command(CLI::App& parent) {
  auto* cmd = parent.add_subcommand(
      "serve",
      "Run the provider process (privsearch-provider, built without any secret-key code) on an "
      "index; every option is passed through, see `privsearch serve --help`");
  cmd->prefix_command();
  cmd->set_help_flag();  // --help goes to the provider
  return {cmd, [cmd] { return exec_provider(cmd->remaining()); }};
}

}  // namespace privsearch::tools
