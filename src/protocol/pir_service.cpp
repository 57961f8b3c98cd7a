#include "protocol/pir_service.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "core/bytes.h"
#include "core/elapsed.h"
#include "core/sha256.h"
#include "pir/zippir/zippir_shard.h"
#include "protocol/pir_memory_state.h"
#include "protocol/provider_core.h"

namespace privsearch::protocol {

v1::ErrorCode pir_error_code(const Status& s) {
  switch (s.code()) {
    case StatusCode::kNotFound:
      return v1::UNKNOWN_PIR_CLIENT;
    case StatusCode::kResourceExhausted:
      return v1::PIR_LIMIT;
    case StatusCode::kFailedPrecondition:
      return v1::NO_PRECOMPUTED_QUERY;
    case StatusCode::kUnavailable:
      return v1::STATE_UNAVAILABLE;
    case StatusCode::kInternal:
      return v1::INTERNAL;
    default:
      return v1::MALFORMED_REQUEST;
  }
}

Result<std::unique_ptr<pir::ZipPirServer>> PirService::build_server(const PirRecords& payloads,
                                                                    const PirConfig& config,
                                                                    const Seed& a_seed,
                                                                    std::string* timing) {
  pir::ZipPirParams params;
  PRIVSEARCH_ASSIGN_OR_RETURN(params.lwe,
                              pir::find_lwe_params(config.lwe_params, config.allow_insecure));
  params.paillier_bits = config.paillier_bits;
  if (config.hint_bits != 0) params.hint_bits = config.hint_bits;
  params.allow_insecure = config.allow_insecure;
  PRIVSEARCH_RETURN_IF_ERROR(params.validate());
  if (payloads.records == 0) return invalid_argument_error("PIR: the database has no records");
  PRIVSEARCH_ASSIGN_OR_RETURN(pir::DatabaseShape shape,
                              pir::choose_database_shape(payloads.records, payloads.record_bytes));
  auto t0 = std::chrono::steady_clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(pir::LweDatabase db, fill_database(payloads, shape));
  const double fill_s = ms_since(t0) / 1000;
  t0 = std::chrono::steady_clock::now();
  pir::ZipPirServerLimits limits;
  // The store caps registrations; this server only caches them, with room for the ones the
  // workers hold while the store replaces them (register_with_room evicts past that).
  limits.max_clients = config.max_clients + std::max(1u, config.offline_threads);
  limits.max_queued_queries = std::max<std::size_t>(config.ready_per_client, 1);
  const unsigned threads = std::max(1u, config.preprocess_threads);
  std::unique_ptr<pir::ZipPirServer> server;
  if (config.shards > 1) {
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto plan,
                                pir::plan_row_shards(params, shape, config.shards));
    PRIVSEARCH_ASSIGN_OR_RETURN(
        server,
        pir::ZipPirServer::create_shard(params, db, plan[config.shard], a_seed, threads, limits));
  } else {
    PRIVSEARCH_ASSIGN_OR_RETURN(
        server, pir::ZipPirServer::create(params, std::move(db), a_seed, threads, limits));
  }
  if (timing != nullptr) {
    *timing = fmt::format(
        "database of {} columns filled in {:.1f} s, hint H = D A and server "
        "made in {:.1f} s",
        shape.columns, fill_s, ms_since(t0) / 1000);
  }
  return server;
}

std::string PirService::last_build() const {
  std::lock_guard lock(mu_);
  return last_build_;
}

Result<std::unique_ptr<PirService>> PirService::create(const PirRecords& payloads,
                                                       std::string artifact_version,
                                                       PirConfig config,
                                                       std::shared_ptr<PirSharedState> shared) {
  auto service = std::unique_ptr<PirService>(new PirService(config));
  service->artifact_version_ = std::move(artifact_version);
  service->a_seed_ = Prng::random_seed();
  if (config.shards == 0 || config.shard >= config.shards || (config.shards > 1 && shared)) {
    return invalid_argument_error("PIR shard " + std::to_string(config.shard) + " of " +
                                  std::to_string(config.shards) +
                                  " (shards need 0 <= shard < shards and no shared state)");
  }
  if (config.shards > 1) {
    // Every shard (and every restart of one) of this index uses the same A, from a hash of the
    // index's salt: LWE needs A uniform and independent of the client's secret (a hash output,
    // which no provider can aim at a trapdoor), and a per-index A keeps one precomputation
    // from serving attacks on every index (a single fixed seed, v1, was shared by all).
    if (config.matrix_salt.empty()) {
      return invalid_argument_error("PIR row shards need the index's matrix salt");
    }
    const std::string label = "privsearch zippir shard matrix v2\n" + config.matrix_salt;
    const auto digest =
        sha256(std::span(reinterpret_cast<const std::uint8_t*>(label.data()), label.size()));
    std::copy(digest.begin(), digest.end(), service->a_seed_.begin());
  }
  if (!shared) {
    PirSharedLimits limits;
    limits.ready_per_client = config.ready_per_client;
    limits.max_clients = config.max_clients;
    limits.idle_expiry_s = config.idle_expiry_s;
    limits.evict_idle_after_s = config.evict_idle_after_s;
    limits.clock = config.clock;
    shared = make_memory_pir_state(limits);
  }
  // Every replica must use one matrix A: a client's query is made against the public info of
  // whichever replica answered PirInfo. The first replica's random seed wins (SET NX; the
  // memory store keeps its one proposal).
  const std::string proposal(service->a_seed_.begin(), service->a_seed_.end());
  PRIVSEARCH_ASSIGN_OR_RETURN(const std::string seed, shared->a_seed(proposal));
  if (seed.size() != service->a_seed_.size()) {
    return Status(StatusCode::kDataLoss, "PIR: the shared matrix seed in " + shared->where() +
                                             " has " + std::to_string(seed.size()) +
                                             " bytes, expected 32");
  }
  std::copy(seed.begin(), seed.end(), service->a_seed_.begin());
  service->store_ = std::move(shared);
  PRIVSEARCH_ASSIGN_OR_RETURN(
      service->server_, build_server(payloads, config, service->a_seed_, &service->last_build_));
  for (unsigned t = 0; t < std::max(1u, config.offline_threads); ++t) {
    service->workers_.emplace_back([s = service.get()] { s->worker_loop(); });
  }
  return service;
}

Result<pir::LweDatabase> PirService::fill_database(const PirRecords& payloads,
                                                   const pir::DatabaseShape& shape) {
  PRIVSEARCH_ASSIGN_OR_RETURN(pir::LweDatabase db, pir::LweDatabase::create(shape));
  if (payloads.records > 0) {
    PRIVSEARCH_RETURN_IF_ERROR(
        db.set_records(std::span(payloads.data, payloads.records * payloads.record_bytes)));
  }
  return db;
}

Status PirService::rebuild(const PirRecords& payloads, std::string artifact_version,
                           std::string* summary) {
  std::shared_ptr<pir::ZipPirServer> previous;
  {
    std::lock_guard lock(mu_);
    previous = server_;
  }
  std::shared_ptr<pir::ZipPirServer> fresh;
  const auto t0 = std::chrono::steady_clock::now();
  const auto& old_shape = previous->info().shape;
  if (!previous->is_shard() && payloads.record_bytes == old_shape.record_bytes &&
      payloads.records >= old_shape.records) {
    // An update: grow by columns and update H over the changed ones.
    auto shape = pir::grown_database_shape(old_shape, payloads.records);
    std::size_t changed = 0;
    if (shape.ok()) {
      PRIVSEARCH_ASSIGN_OR_RETURN(auto db, fill_database(payloads, *shape));
      const double fill_s = ms_since(t0) / 1000;
      pir::ZipPirServerLimits limits;
      limits.max_clients = config_.max_clients + std::max(1u, config_.offline_threads);
      limits.max_queued_queries = std::max<std::size_t>(config_.ready_per_client, 1);
      auto updated = pir::ZipPirServer::update(
          *previous, std::move(db), std::max(1u, config_.preprocess_threads), limits, &changed);
      if (updated.ok()) {
        fresh = std::move(updated).value();
        if (summary != nullptr) {
          *summary = fmt::format(
              "database of {} columns filled in {:.1f} s, hint H = D A "
              "updated over its {} changed columns and server made in "
              "{:.1f} s",
              shape->columns, fill_s, changed, ms_since(t0) / 1000 - fill_s);
        }
      }
    }
  }
  if (!fresh) {
    std::string timing;
    PRIVSEARCH_ASSIGN_OR_RETURN(fresh, build_server(payloads, config_, a_seed_, &timing));
    if (summary != nullptr) *summary = "rebuilt: " + timing;
  }
  std::lock_guard lock(mu_);
  // No registration moves: the fresh server registers clients from the store when they are
  // next used, and the workers, now asking for the new version's work, recompute every
  // client's hints without any client message (a shape change makes that registration
  // unusable: UNKNOWN_PIR_CLIENT, set up again).
  server_ = std::move(fresh);
  artifact_version_ = std::move(artifact_version);
  if (summary != nullptr) last_build_ = *summary;
  cv_.notify_all();
  return Status();
}

PirService::~PirService() {
  cancel_ = true;  // hints in progress (minutes each at real sizes) end early
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (store_) store_->interrupt();  // null when create() refused the config
  for (auto& t : workers_) t.join();
}

v1::Error setup_rate_refusal(const RateLimit& limit, double wait_s) {
  return make_error(v1::RATE_LIMITED,
                    fmt::format("PIR setups are limited to {:g} per minute per client; retry in "
                                "{:.1f} s",
                                limit.per_minute, wait_s));
}

std::size_t PirService::db_bytes() const {
  std::lock_guard lock(mu_);
  return server_->db_bytes();
}

std::size_t PirService::registered_clients() const {
  const auto clients = store_->clients();
  return clients.ok() ? clients->size() : 0;
}

std::shared_ptr<pir::ZipPirServer> PirService::server_for(const std::string& version,
                                                          v1::Error* error) const {
  std::lock_guard lock(mu_);
  if (version != artifact_version_) {
    *error = make_error(v1::PIR_VERSION_MISMATCH, "PIR database version `" + artifact_version_ +
                                                      "`, the client has `" + version +
                                                      "`: the database was rebuilt");
    return nullptr;
  }
  return server_;
}

v1::PirInfo PirService::info() const {
  v1::PirInfo out;
  std::lock_guard lock(mu_);
  out.set_info(to_byte_string(server_->info().serialize()));
  out.set_artifact_version(artifact_version_);
  out.set_ready_per_client(static_cast<std::uint32_t>(config_.ready_per_client));
  out.set_pir_db_bytes(server_->db_bytes());
  out.set_offline_s_per_query(last_offline_s_);
  out.set_offline_cpu_s_per_query(last_offline_cpu_s_);
  return out;
}

bool PirService::wait_until_ready(int timeout_ms) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    std::string version;
    {
      std::lock_guard lock(mu_);
      version = artifact_version_;
    }
    bool all = true;
    const auto clients = store_->clients();
    if (!clients.ok()) all = false;
    for (const auto id : clients.ok() ? *clients : std::vector<std::uint64_t>{}) {
      const auto ready = store_->ready(id, version);
      if (!ready.ok() || (ready->has_value() && (*ready)->size() < config_.ready_per_client)) {
        all = false;
      }
    }
    if (all) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace privsearch::protocol
