// PirService's calls and its hint worker, over the one registration and hint store
// (protocol/pir_shared_state.h: Redis shared by the replicas, or pir_memory_state.h in this
// process). The local ZipPirServer's registrations are only a cache of the store's.
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <thread>

#include "core/bytes.h"
#include "pir/zippir/zippir_common.h"
#include "protocol/pir_service.h"
#include "protocol/provider_core.h"

namespace privsearch::protocol {
namespace {

template <typename Response>
Response refused(v1::ErrorCode code, const std::string& message) {
  Response out;
  *out.mutable_error() = make_error(code, message);  // only on refusal: it sets the oneof
  return out;
}

template <typename Response>
Response refused(v1::Error error) {
  Response out;
  *out.mutable_error() = std::move(error);
  return out;
}

// A message made for another ZipPIR version or database: PIR_VERSION_MISMATCH; bad framing:
// MALFORMED_REQUEST. Null when the framing fits this server.
std::optional<v1::Error> framing_error(std::span<const std::uint8_t> message,
                                       pir::ZipPirMessageKind kind, std::uint64_t params_id) {
  const Status s = pir::check_message_framing(message, kind, params_id);
  if (s.ok()) return std::nullopt;
  return make_error(s.code() == StatusCode::kFailedPrecondition ? v1::PIR_VERSION_MISMATCH
                                                                : v1::MALFORMED_REQUEST,
                    s.message());
}

}  // namespace

// Local registrations are only a cache of the store's, so a full server forgets one to make
// room. One at a time (cache_mu_): a worker re-registering the forgotten client between the
// eviction and this registration would otherwise fill the room again and refuse a setup the
// store has room for.
Result<std::uint64_t> PirService::register_with_room(pir::ZipPirServer& server,
                                                     std::span<const std::uint8_t> setup) {
  std::lock_guard lock(cache_mu_);
  auto id = server.register_client(setup);
  if (!id.ok() && id.status().code() == StatusCode::kResourceExhausted) {
    const auto ids = server.client_ids();
    if (!ids.empty()) server.unregister_client(ids.front());
    id = server.register_client(setup);
  }
  return id;
}

Status PirService::register_locally(pir::ZipPirServer& server, std::uint64_t client,
                                    const std::string* known_setup) {
  if (server.has_client(client)) return Status();
  std::string setup;
  if (known_setup != nullptr) {
    setup = *known_setup;
  } else {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto stored, store_->setup_of(client));
    if (!stored) return Status(StatusCode::kNotFound, "unknown PIR client");
    setup = std::move(*stored);
  }
  // What the store holds is checked: it must be the setup of this very client.
  if (pir::detail::id_of_setup(byte_view(setup)) != client) {
    return Status(StatusCode::kNotFound,
                  "the shared store's registration of this PIR client is damaged: set up again");
  }
  const auto id = register_with_room(server, byte_view(setup));
  if (!id.ok()) {
    return Status(StatusCode::kNotFound,
                  "the shared store's registration of this PIR client "
                  "is unusable (" +
                      id.status().message() + "): set up again");
  }
  return Status();
}

v1::PirSetupResponse PirService::setup(const v1::PirSetupRequest& request,
                                       const std::string& client_key) {
  // Cheap checks first: the rate, the version, the framing; then registering locally checks
  // the Paillier modulus (size, odd, no small factor) before the store or any worker sees it.
  if (const double wait_s = setup_limiter_.take(client_key); wait_s > 0) {
    return refused<v1::PirSetupResponse>(setup_rate_refusal(config_.setups, wait_s));
  }
  v1::Error wrong_version;
  const auto server = server_for(request.artifact_version(), &wrong_version);
  if (!server) return refused<v1::PirSetupResponse>(std::move(wrong_version));
  if (auto e = framing_error(byte_view(request.setup()), pir::ZipPirMessageKind::kSetup,
                             server->info().params_id())) {
    return refused<v1::PirSetupResponse>(std::move(*e));
  }
  const auto id = register_with_room(*server, byte_view(request.setup()));
  if (!id.ok()) {
    return refused<v1::PirSetupResponse>(pir_error_code(id.status()), id.status().message());
  }
  const Status s =
      store_->register_client(*id, request.setup(), request.artifact_version(), client_key);
  if (!s.ok()) {
    server->unregister_client(*id);  // refused by the store (retired, full): not cached either
    return refused<v1::PirSetupResponse>(pir_error_code(s), s.message());
  }
  v1::PirSetupResponse out;
  out.set_client_id(*id);
  return out;
}

v1::PirStatusResponse PirService::status(const v1::PirStatusRequest& request) {
  v1::Error wrong_version;
  if (!server_for(request.artifact_version(), &wrong_version)) {
    return refused<v1::PirStatusResponse>(std::move(wrong_version));
  }
  auto ready = store_->ready(request.client_id(), request.artifact_version());
  if (!ready.ok()) {
    return refused<v1::PirStatusResponse>(v1::STATE_UNAVAILABLE, ready.status().message());
  }
  if (!ready->has_value()) {
    return refused<v1::PirStatusResponse>(v1::UNKNOWN_PIR_CLIENT, "unknown PIR client");
  }
  v1::PirStatusResponse out;
  for (const std::uint64_t i : **ready) out.add_ready_query_indices(i);
  return out;
}

v1::PirQueryResponse PirService::query(const v1::PirQueryRequest& request) {
  v1::Error wrong_version;
  const auto server = server_for(request.artifact_version(), &wrong_version);
  if (!server) return refused<v1::PirQueryResponse>(std::move(wrong_version));
  if (auto e = framing_error(byte_view(request.query()), pir::ZipPirMessageKind::kQuery,
                             server->info().params_id())) {
    return refused<v1::PirQueryResponse>(std::move(*e));
  }
  const auto message = byte_view(request.query());
  auto ids = server->query_ids(message);
  if (!ids.ok()) {
    return refused<v1::PirQueryResponse>(v1::MALFORMED_REQUEST, ids.status().message());
  }
  const auto [client, index] = *ids;
  if (const Status s = register_locally(*server, client); !s.ok()) {
    return refused<v1::PirQueryResponse>(pir_error_code(s), s.message());
  }
  // The whole message is checked before the one-time hint is taken from the store.
  if (const Status s = server->check_query(message); !s.ok()) {
    return refused<v1::PirQueryResponse>(pir_error_code(s), s.message());
  }
  auto hint = store_->take_hint(client, request.artifact_version(), index);
  if (!hint.ok()) {
    return refused<v1::PirQueryResponse>(pir_error_code(hint.status()), hint.status().message());
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto answer = server->answer_with_hint(message, byte_view(*hint));
  v1::PirQueryResponse out;
  out.set_provider_ms(
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  // The index is spent whatever happens next; queue its replacement.
  (void)store_->ready(client, request.artifact_version());
  if (!answer.ok()) {
    // The query passed its check, so a failure here is the stored hint's (damaged or foreign).
    *out.mutable_error() = make_error(v1::NO_PRECOMPUTED_QUERY,
                                      "the shared store's hint for this query index is unusable (" +
                                          answer.status().message() + "): use another index");
    return out;
  }
  out.set_answer(to_byte_string(*answer));
  return out;
}

void PirService::worker_loop() {
  // Lowest priority for this thread only (Linux applies setpriority to a thread id).
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
  for (;;) {
    std::string version;
    std::shared_ptr<pir::ZipPirServer> server;
    {
      std::lock_guard lock(mu_);
      if (stop_) return;
      version = artifact_version_;
      server = server_;
    }
    auto work = store_->next_work(version, 1);
    if (!work.ok()) {
      // The store is down: wait (bounded, and woken by a stop) and try again.
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; });
      continue;
    }
    if (!work->has_value()) continue;
    const PirSharedState::Work& w = **work;
    const auto t0 = std::chrono::steady_clock::now();
    timespec c0{}, c1{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    const Status registered = register_locally(*server, w.client, &w.setup);
    auto hint = registered.ok() ? server->compute_hint(w.client, w.index, 1, &cancel_)
                                : Result<std::vector<std::uint8_t>>(registered);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    if (!hint.ok()) {
      (void)store_->abandon(w, version);
      continue;
    }
    // Delivery failures (the store went down) lose this index's hint; it is never reused and
    // the client's pending count expires, after which it is topped up again.
    if (store_->deliver(w, version, std::string(hint->begin(), hint->end())).ok()) {
      std::lock_guard lock(mu_);
      last_offline_s_ =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      last_offline_cpu_s_ = static_cast<double>(c1.tv_sec - c0.tv_sec) +
                            1e-9 * static_cast<double>(c1.tv_nsec - c0.tv_nsec);
    }
  }
}

}  // namespace privsearch::protocol
