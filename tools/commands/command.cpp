#include "commands/command.h"

#include <cstdio>

namespace privsearch::tools {

int fail(const Status& status, const std::string& command) {
  const std::string who = command.empty() ? "privsearch" : "privsearch " + command;
  std::fprintf(stderr, "%s: %s\n", who.c_str(), status.to_string().c_str());
  return 1;
}

}  // namespace privsearch::tools
