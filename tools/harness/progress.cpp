#include "harness/progress.h"

#include <cstdio>

namespace privsearch::tools {

Progress::Progress(std::string prefix)
    : prefix_(std::move(prefix)), start_(std::chrono::steady_clock::now()) {}

void Progress::operator()(const std::string& step) const {
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::fprintf(stderr, "[%7.1fs] %s%s\n", s, prefix_.c_str(), step.c_str());
}

std::function<void(const std::string&)> Progress::callback() const {
  return [copy = *this](const std::string& step) { copy(step); };
}

}  // namespace privsearch::tools
