// PayloadFetcher's PIR clients (payload_fetcher.h), shared by its two source files and kept out
// of the public header (GMP types of ZipPIR, the hintless client).
#pragma once

#include <memory>
#include <optional>

#include "client/core/pir_client.h"
#include "client/payload_fetcher.h"
#include "pir/zippir/zippir_client.h"

namespace privsearch::client {

struct PayloadFetcher::Pir {
  std::optional<pir::ZipPirPublicInfo> info;
  std::optional<pir::ZipPirClient> client;
  // The hintless backend's client (client/core/pir_client.h: no setup, a fresh secret per query,
  // records checked against the signed digests).
  std::unique_ptr<core::PirClient> hintless;
};

}  // namespace privsearch::client
