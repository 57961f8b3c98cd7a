// The one progress helper of the long-running commands and suites: "[   12.3s] <prefix>step" on
// stderr, seconds since the helper was made. stdout stays clean for the JSON result.
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace privsearch::tools {

class Progress {
 public:
  explicit Progress(std::string prefix = "");
  void operator()(const std::string& step) const;
  // As a callback for the libraries' progress parameters.
  std::function<void(const std::string&)> callback() const;

 private:
  std::string prefix_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace privsearch::tools
