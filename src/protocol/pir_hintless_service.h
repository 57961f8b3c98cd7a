// The provider's hintless private fetch (YPIR+SP, pir/hintless) behind the PIR RPCs: the default
// backend. The database is preprocessed once per artifact version for every client; a client
// needs no setup, the provider keeps nothing per client, and each PirQuery carries one or more
// self-contained queries (each with its own fresh packing key) answered in one database pass.
//
// PirInfo: backend HINTLESS, the public info (params id and shape), max_batch. PirSetup and
// PirStatus are refused (MALFORMED_REQUEST naming the backend): an old ZipPIR client learns why.
// PirQuery: PIR_VERSION_MISMATCH for another artifact version or params id, MALFORMED_REQUEST
// for an empty batch, a ZipPIR-style `query`, or bytes that do not decode, PIR_LIMIT above
// max_batch. Shared mode needs nothing: the CRS is derived from the params and every replica
// preprocesses the same records itself. As a shard (config shard/shards) it holds and answers
// one block range of the outputs (their rows of D only); its answers are parts.
// Thread safety: all methods may run concurrently; rebuild swaps the database under a lock and
// queries in flight finish on the one they started with.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/status.h"
#include "pir/hintless/server.h"
#include "protocol/pir_backend.h"

namespace privsearch::protocol {

struct HintlessPirConfig {
  std::string params = "ypir-sp-d2048";
  bool allow_insecure = false;  // test-only parameter sets
  unsigned threads = 2;         // preprocessing and the parts of one answer
  std::size_t max_batch = 32;   // queries one PirQuery may carry
  // Queries (not requests: each query of a batch is a pass over the database) per identity, or
  // per address when anonymous, per minute, and burst (0: unlimited). The default lets a user
  // fetch the top documents and probed lists of a search every second or so, and stops one
  // caller from holding the provider's cores with back-to-back maximal batches.
  RateLimit queries{1200, 128};
  // This process answers output block range `shard` of `shards` (PirInfo.shard_*): outputs
  // [shard rho / shards, (shard + 1) rho / shards), only their rows of D held; a coordinator
  // (server/pir_coordinator.h) joins the parts. At most rho shards.
  std::size_t shard = 0, shards = 1;
};

class HintlessPirService : public PirBackend {
 public:
  static Result<std::unique_ptr<HintlessPirService>> create(const PirRecords& records,
                                                            std::string artifact_version,
                                                            HintlessPirConfig config);

  v1::PirInfo info() const override;
  v1::PirSetupResponse setup(const v1::PirSetupRequest& request,
                             const std::string& client_key) override;
  v1::PirStatusResponse status(const v1::PirStatusRequest& request) override;
  v1::PirQueryResponse query(const v1::PirQueryRequest& request) override {
    return query_from(request, "local");
  }
  v1::PirQueryResponse query_from(const v1::PirQueryRequest& request,
                                  const std::string& client_key) override;
  const RateLimit& setup_rate() const override { return no_setups_; }
  // A new database under `artifact_version`, preprocessed before it replaces the old one.
  Status rebuild(const PirRecords& records, std::string artifact_version,
                 std::string* summary = nullptr) override;
  std::string last_build() const override;

 private:
  struct Database {
    std::unique_ptr<pir::hintless::HintlessServer> server;
    std::string version;
    std::string public_info;
    std::string build;
  };
  explicit HintlessPirService(HintlessPirConfig config)
      : config_(std::move(config)), query_limiter_(config_.queries) {}
  static Result<std::shared_ptr<const Database>> build(const HintlessPirConfig& config,
                                                       const PirRecords& records,
                                                       std::string version);
  std::shared_ptr<const Database> current() const;
  // `records` as an append to `old` (more records of the same size whose shape only adds
  // columns): the grown server; kFailedPrecondition otherwise (the caller rebuilds).
  Result<std::unique_ptr<pir::hintless::HintlessServer>> grow(
      const pir::hintless::HintlessServer& old, const PirRecords& records,
      const pir::hintless::HintlessServer::RecordSource& source) const;

  HintlessPirConfig config_;
  RateLimit no_setups_{0, 0};
  RateLimiter query_limiter_;
  mutable std::mutex mu_;
  std::shared_ptr<const Database> db_;
};

}  // namespace privsearch::protocol
