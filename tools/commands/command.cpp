#include "commands/command.h"

#include <cstdio>

namespace privsearch::tools {

int fail(const Status& status, const std::string& command) {
  const std::string who = command.empty() ? "privsearch" : "privsearch " + command;
  std::fprintf(stderr, "%s: %s\n", who.c_str(), status.to_string().c_str());
  return 1;
}

Progress::Progress() : start_(std::chrono::steady_clock::now()) {}

void Progress::operator()(const std::string& step) const {
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::fprintf(stderr, "[%7.1fs] %s\n", s, step.c_str());
}

std::function<void(const std::string&)> Progress::callback() const {
  return [copy = *this](const std::string& step) { copy(step); };
}

}  // namespace privsearch::tools
