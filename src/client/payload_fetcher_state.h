// PayloadFetcher's PIR clients (payload_fetcher.h), shared by its two source files and kept out
// of the public header (GMP types of ZipPIR, the hintless client).
#pragma once

#include <optional>

#include "client/payload_fetcher.h"
#include "pir/hintless/client/client.h"
#include "pir/zippir/zippir_client.h"

namespace privsearch::client {

struct PayloadFetcher::Pir {
  std::optional<pir::ZipPirPublicInfo> info;
  std::optional<pir::ZipPirClient> client;
  // The hintless backend's client (no setup, a fresh secret per query).
  std::optional<pir::hintless::HintlessClient> hintless;
  std::size_t max_batch = 1;  // queries per PirQuery (PirInfo.max_batch and kMaxRequestBytes)
};

}  // namespace privsearch::client
