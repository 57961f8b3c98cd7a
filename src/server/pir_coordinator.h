// The PIR RPCs for a database split by rows across S shard processes:
// each shard is a provider started with `--pir-shard I/S` (protocol::PirConfig::shard), and the
// provider that clients talk to forwards every PIR call to all shards over gRPC/TLS and joins
// their answers (pir/zippir/zippir_shard.h), so a client sees one database and the same bytes a
// single server would send:
//   info    the shards' public info must be byte-identical (one database, one A); the database
//           bytes are the shards' sum and the hint time their maximum;
//   setup   every shard registers the client (one client id);
//   status  the query indices ready on every shard;
//   query   sent to every shard in parallel; the parts are assembled, or the call fails whole.
// The hintless backend (PirInfo.backend) splits by output blocks instead: each shard's PirInfo
// names its block range (checked to follow on from the previous shard's), setup and status are
// refused by the shards themselves, and each query's parts are joined by
// pir::hintless::join_response_parts (a batch: every query's in turn).
// A shard that does not answer (down, deadline) is PIR_SHARD_UNAVAILABLE naming it; a shard's own
// refusal (NO_PRECOMPUTED_QUERY, UNKNOWN_PIR_CLIENT, ...) is passed on; parts that do not fit
// together are INTERNAL. Never a partial record. The shards are parts of the provider (they see
// what it sees: setups and queries, never a record index); their addresses and certificate come
// from configuration (no membership protocol). The setup rate limit is applied here, per client;
// shards should allow the coordinator's aggregate rate (`--pir-setups-per-minute`).
// Thread safety: all methods may run concurrently.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "protocol/pir_backend.h"
#include "protocol/rate_limiter.h"

namespace privsearch::server {

struct PirShardsConfig {
  std::vector<std::string> addresses;  // host:port of shard 0, 1, ... in row order
  std::string ca_pem;                  // the shards' certificate (or their CA), PEM
  int deadline_ms = 30000;             // per call to one shard
  std::size_t max_message_bytes = std::size_t{64} << 20;
  protocol::RateLimit setups{10, 5};
  bool allow_insecure = false;  // accept the shards' test-only parameter sets
};

class PirCoordinator : public protocol::PirBackend {
 public:
  // Connects lazily (a shard may start later); kInvalidArgument without addresses or
  // certificate.
  static Result<std::unique_ptr<PirCoordinator>> create(PirShardsConfig config);
  ~PirCoordinator() override;

  v1::PirInfo info() const override;
  v1::PirSetupResponse setup(const v1::PirSetupRequest& request,
                             const std::string& client_key) override;
  v1::PirStatusResponse status(const v1::PirStatusRequest& request) override;
  v1::PirQueryResponse query(const v1::PirQueryRequest& request) override;
  const protocol::RateLimit& setup_rate() const override { return config_.setups; }

 private:
  struct Shards;
  // Hintless: every query's parts (one per shard, in output order) joined into its answer.
  template <typename Replies>
  v1::PirQueryResponse join_hintless(const std::string& public_info, const Replies& replies,
                                     double provider_ms);
  explicit PirCoordinator(PirShardsConfig config);
  PirShardsConfig config_;
  std::unique_ptr<Shards> shards_;
  mutable protocol::RateLimiter setup_limiter_;
};

}  // namespace privsearch::server
