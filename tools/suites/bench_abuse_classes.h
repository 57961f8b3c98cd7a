// The abuse classes of `privsearch bench abuse` (suites/bench_abuse.h), one object each: the
// attack runs on its own threads between start() and stop(), and report() says what the attacker
// did and what the provider (or its front) did about it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "client/provider_client.h"
#include "core/status.h"

namespace privsearch::tools::abuse {

// What a class needs of the provider under attack.
struct Target {
  // A connection with this bearer token.
  std::function<Result<std::unique_ptr<client::ProviderClient>>(const std::string&)> connect;
  std::string mallory, alice;       // the attacker's and the legitimate client's tokens
  std::uint16_t port = 0;           // on 127.0.0.1
  std::uint16_t web_port = 0;       // the browser endpoint's, for the browser classes (0: none)
  std::string largest_public_file;  // the index file a browser may read that is largest
  std::string version;              // the index's artifact version
  // One search of the legitimate client (the load the bench keeps up during every attack), for
  // a class that measures a baseline under the same load before its attack.
  std::function<void()> legit_search;
};

class AbuseClass {
 public:
  virtual ~AbuseClass() = default;
  virtual Status start() = 0;
  virtual void stop() = 0;
  virtual nlohmann::json report() const = 0;
};

// Every class, in the order `bench abuse` runs them by default.
const std::vector<std::string>& class_names();
// Provider arguments the class needs beyond the bench's defaults (pir_setups: ZipPIR).
std::vector<std::string> provider_args(const std::string& name);
// kInvalidArgument for an unknown name; the class's preparation errors otherwise.
Result<std::unique_ptr<AbuseClass>> make_class(const std::string& name, const Target& target);

}  // namespace privsearch::tools::abuse
