// Waiting, boundedly, for a provider process to serve a version after a reload (SIGHUP).
#pragma once

#include <chrono>
#include <string>
#include <thread>

#include "client/provider_client.h"

namespace privsearch::testing {

// Polls ServerInfo every 50 ms for 10 s at most; true once the provider serves `version`.
inline bool wait_for_version(client::ProviderClient& cl, const std::string& version) {
  for (int i = 0; i < 200; ++i) {
    const auto info = cl.server_info();
    if (info.ok() && info->artifact_version() == version) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace privsearch::testing
