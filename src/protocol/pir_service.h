// The provider's private payload fetch (ZipPIR, arXiv 2603.09190) behind the protobuf messages of
// privsearch.proto: PirInfo, PirSetup, PirStatus, PirQuery. No sockets (layer L4).
//
// The PIR database is the index's payload store (fixed-size records, one per document, built
// with the index and versioned by its artifact version), or, for a second service, the IVF
// lists (protocol/ivf_list_pir.h: one record per list; `--pir-lists`): any PirRecords. On start
// the service computes the global hint H = D A; background workers keep `ready_per_client`
// per-client compressed hints precomputed (the paper's silent offline phase: it needs only the
// client's N and seed), on `offline_threads` threads at the lowest scheduling priority (nice 19)
// so reranking is never starved. A rebuild (SIGHUP) keeps the clients' registrations and
// recomputes their hints from the new database without any client involvement.
//
// Registrations, hints and the hint work queue live in one store behind PirSharedState: with
// `--state redis://...` (protocol/pir_shared_state.h) the replicas share it, so a client
// registered through one replica fetches through any other, every query index is answered at
// most once cluster-wide and every hint is computed by one replica's worker; without, the store
// is this process's (protocol/pir_memory_state.h: the same rules, plus retired setups and
// scheduling fair between owners). The service keeps only a cache of registrations in its
// ZipPirServer (re-made from the store on demand) and the database. All replicas use the matrix
// seed stored first.
//
// Thread safety: all methods may run concurrently.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "index/artifacts/payload_store.h"
#include "pir/zippir/zippir_server.h"
#include "protocol/pir_backend.h"
#include "protocol/pir_shared_state.h"
#include "protocol/privsearch.pb.h"
#include "protocol/rate_limiter.h"

namespace privsearch::protocol {

struct PirConfig {
  std::string lwe_params = "zippir-n1400-binary";
  int paillier_bits = 3072;
  int hint_bits = 0;  // 0: default
  std::size_t max_clients = 256;
  std::size_t ready_per_client = 2;  // precomputed hints kept per client
  unsigned offline_threads = 1;      // background hint workers (lowest priority)
  unsigned preprocess_threads = 2;   // H = D A at start
  bool allow_insecure = false;       // test-only parameter sets
  // Setups per identity (or peer address) per minute, and burst: each queues hint work.
  RateLimit setups{10, 5};
  // A registration nobody used (setup or status: every fetch asks status first) for this long
  // is forgotten with its hints; its client sets up again when it returns (UNKNOWN_PIR_CLIENT).
  int idle_expiry_s = 3600;
  // When `max_clients` are registered, a new setup evicts the least recently used registration
  // idle at least this long (PIR_LIMIT only when every registration is busier).
  int evict_idle_after_s = 60;
  // The clock registrations idle by (PirSharedLimits::clock; tests only).
  std::function<std::chrono::steady_clock::time_point()> clock;
  // This process answers for row shard `shard` of `shards` (pir/zippir/zippir_shard.h); a
  // coordinator (server/pir_coordinator.h) joins the shards' parts into the single server's
  // response. The shards of one database need one matrix A: with shards > 1 its seed is derived
  // from `matrix_salt` instead of drawn at random. Not with `shared`.
  std::size_t shard = 0, shards = 1;
  // With shards > 1 (required then): the index's own salt of A, so no two indexes share one
  // matrix (a precomputation against one does not serve another). ProviderProcess passes the
  // SHA-256 of the base payload file from the signed manifest: every shard of one index loads
  // the same, an update keeps it (A, and the clients' setups, survive), another index differs.
  std::string matrix_salt;
};

// The code a PIR refusal carries, for failures after the framing check passed: a failed
// precondition there can only be a query whose hint is not ready; kUnavailable is the shared
// store (STATE_UNAVAILABLE).
v1::ErrorCode pir_error_code(const Status& s);

class PirService : public PirBackend {
 public:
  // Builds the PIR database from the payload store and starts the background worker.
  // `shared`: registrations and hints in a store shared by replicas (null: this process only;
  // the config's client limits then apply here, else in the store).
  static Result<std::unique_ptr<PirService>> create(
      const PirRecords& records, std::string artifact_version, PirConfig config,
      std::shared_ptr<PirSharedState> shared = nullptr);
  static Result<std::unique_ptr<PirService>> create(
      const index::PayloadStore& payloads, std::string artifact_version, PirConfig config,
      std::shared_ptr<PirSharedState> shared = nullptr) {
    return create(PirRecords::of(payloads), std::move(artifact_version), config, std::move(shared));
  }
  ~PirService() override;

  v1::PirInfo info() const override;
  // `client_key`: who is asking (protocol::Caller::rate_key), for the setup rate limit.
  v1::PirSetupResponse setup(const v1::PirSetupRequest& request,
                             const std::string& client_key = "local") override;
  v1::PirStatusResponse status(const v1::PirStatusRequest& request) override;
  v1::PirQueryResponse query(const v1::PirQueryRequest& request) override;

  // Database update (the paper's advantage over client-held hints): swaps in a PIR database
  // built from `payloads` under a new artifact version, keeps A's seed (so the public info stays
  // valid when the shape is unchanged), re-registers every client from its stored setup and lets
  // the worker recompute their hints, continuing each client's query indices (an index is never
  // reused). Clients then only switch their artifact version. Shape changes need a new setup.
  // When the new payloads extend the old ones (an update: index/artifacts/append.h; more records of
  // the same size, some zeroed), the database keeps its rows and grows by columns, and H = D A is
  // updated over the changed columns only (ZipPirServer::update: a 1% append recomputes ~1% of
  // it); else, or when the grown shape would not decode, it is built anew. `summary`, when
  // given, says which and how much.
  Status rebuild(const PirRecords& records, std::string artifact_version,
                 std::string* summary = nullptr) override;
  Status rebuild(const index::PayloadStore& payloads, std::string artifact_version,
                 std::string* summary = nullptr) {
    return rebuild(PirRecords::of(payloads), std::move(artifact_version), summary);
  }

  std::size_t db_bytes() const;
  // How the current database was made (filled, hint computed or updated, with times).
  std::string last_build() const override;
  const RateLimit& setup_rate() const override { return config_.setups; }
  // Registrations in the store (cluster-wide with Redis).
  std::size_t registered_clients() const;
  // Waits (for tests) until every registered client has its ready hints or `timeout_ms` passes.
  bool wait_until_ready(int timeout_ms) const;

 private:
  explicit PirService(const PirConfig& config) : config_(config), setup_limiter_(config.setups) {}
  // Takes work from the store, computes its hint and delivers it, at the lowest priority.
  void worker_loop();
  // Registers `client` in `server` from the store's setup (checked to hash to `client`), making
  // room by forgetting another local registration (they are only a cache here). kNotFound when
  // the store has none.
  Status register_locally(pir::ZipPirServer& server, std::uint64_t client,
                          const std::string* known_setup = nullptr);
  // Registers `setup` in the local cache `server`, forgetting another registration when full.
  Result<std::uint64_t> register_with_room(pir::ZipPirServer& server,
                                           std::span<const std::uint8_t> setup);
  // The current server for a request of `version`; null with PIR_VERSION_MISMATCH in `error`
  // when the database has been rebuilt since.
  std::shared_ptr<pir::ZipPirServer> server_for(const std::string& version, v1::Error* error) const;
  // `timing`, when given: how long filling the database and preparing the server took.
  static Result<std::unique_ptr<pir::ZipPirServer>> build_server(const PirRecords& payloads,
                                                                 const PirConfig& config,
                                                                 const Seed& a_seed,
                                                                 std::string* timing = nullptr);
  // The database of `payloads` in `shape`.
  static Result<pir::LweDatabase> fill_database(const PirRecords& payloads,
                                                const pir::DatabaseShape& shape);

  std::string artifact_version_;
  std::string last_build_;
  PirConfig config_;
  RateLimiter setup_limiter_;
  std::shared_ptr<pir::ZipPirServer> server_;
  Seed a_seed_{};
  mutable std::mutex mu_;
  std::mutex cache_mu_;         // the local registration cache's evict-and-register, one at a time
  std::condition_variable cv_;  // wakes a worker waiting out a store outage when stopping
  bool stop_ = false;
  std::atomic<bool> cancel_{false};  // set when stopping: ends hint work in progress
  double last_offline_s_ = 0, last_offline_cpu_s_ = 0;
  std::vector<std::thread> workers_;
  // Registrations, hints and the work queue: Redis (shared by replicas) or this process's.
  std::shared_ptr<PirSharedState> store_;
};

}  // namespace privsearch::protocol
