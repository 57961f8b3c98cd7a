#include "client/payload_fetcher.h"

#include <chrono>
#include <thread>

#include "client/core/refusal.h"
#include "client/payload_fetcher_state.h"
#include "core/bytes.h"
#include "core/elapsed.h"
#include "index/artifacts/payload_store.h"

namespace privsearch::client {

PayloadFetcher::PayloadFetcher(ProviderClient& transport, std::string version, FetchOptions options)
    : transport_(transport),
      version_(std::move(version)),
      options_(options),
      pir_(std::make_unique<Pir>()) {}
namespace {

using Clock = std::chrono::steady_clock;
std::string to_string(const std::vector<std::uint8_t>& v) { return {v.begin(), v.end()}; }

}  // namespace

Status PayloadFetcher::from_error(const v1::Error& e) {
  return core::refusal_status("the private fetch", e.code(), e.message());
}

Result<std::unique_ptr<PayloadFetcher>> PayloadFetcher::create(ProviderClient& transport,
                                                               std::string artifact_version,
                                                               FetchOptions options) {
  auto f = std::unique_ptr<PayloadFetcher>(
      new PayloadFetcher(transport, std::move(artifact_version), options));
  PRIVSEARCH_RETURN_IF_ERROR(f->setup());
  return f;
}

PayloadFetcher::~PayloadFetcher() {
  if (precompute_.valid()) (void)precompute_.get();
}

Status PayloadFetcher::setup() {
  const auto owner = owner_.hold();
  if (precompute_.valid()) (void)precompute_.get();
  PRIVSEARCH_ASSIGN_OR_RETURN(v1::PirInfo info, transport_.pir_info(options_.database));
  if (info.has_error()) return from_error(info.error());
  if (info.artifact_version() != version_) {
    return failed_precondition_error("PIR database version `" + info.artifact_version() +
                                     "` != local index `" + version_ +
                                     "`: refresh the local index");
  }
  db_bytes_ = info.pir_db_bytes();
  if (info.backend() == v1::PIR_BACKEND_HINTLESS) return setup_hintless(info);
  PRIVSEARCH_ASSIGN_OR_RETURN(pir_->info, pir::ZipPirPublicInfo::deserialize(
                                              byte_view(info.info()), options_.allow_insecure));
  PRIVSEARCH_RETURN_IF_ERROR(core::check_pir_shape(pir_->info->shape.records,
                                                   pir_->info->shape.record_bytes, pir_options()));
  PRIVSEARCH_ASSIGN_OR_RETURN(pir::ZipPirClient c, pir::ZipPirClient::create(*pir_->info, prng_));
  pir_->client.emplace(std::move(c));
  const auto setup = pir_->client->setup_message();
  setup_bytes_ = setup.size();
  v1::PirSetupRequest req;
  req.set_artifact_version(version_);
  req.set_setup(to_string(setup));
  req.set_database(options_.database);
  PRIVSEARCH_ASSIGN_OR_RETURN(v1::PirSetupResponse resp, transport_.pir_setup(req));
  if (resp.has_error()) return from_error(resp.error());
  client_id_ = resp.client_id();
  ++setups_;
  return Status();
}

void PayloadFetcher::precompute_async() {
  const auto owner = owner_.hold();
  if (precompute_.valid() || !pir_->client) return;  // hintless: nothing to precompute
  const std::uint64_t index = pir_->client->next_query_index();
  precompute_ = std::async(std::launch::async, [this, index] {
    return pir_->client->precompute_query(index, options_.threads);
  });
}

Status PayloadFetcher::wait_for_ready_index(std::uint64_t& index) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(options_.wait_ms);
  for (;;) {
    v1::PirStatusRequest req;
    req.set_artifact_version(version_);
    req.set_client_id(client_id_);
    req.set_database(options_.database);
    PRIVSEARCH_ASSIGN_OR_RETURN(v1::PirStatusResponse resp, transport_.pir_status(req));
    if (resp.has_error()) return from_error(resp.error());
    for (std::uint64_t i : resp.ready_query_indices()) {
      if (i >= pir_->client->next_query_index()) {
        index = i;
        return Status();
      }
    }
    if (Clock::now() > deadline) {
      return unavailable_error(
          "the provider has no precomputed PIR hint for this client after " +
          std::to_string(options_.wait_ms) +
          " ms (its offline hint work runs at the lowest CPU priority: a provider machine busy "
          "with other work delays it; GetPirInfo reports the seconds per hint)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::uint64_t PayloadFetcher::record_bytes() const {
  const auto owner = owner_.hold();  // setup() replaces the info
  if (pir_->hintless) return pir_->hintless->record_bytes();
  return pir_->info->shape.record_bytes;
}
std::uint64_t PayloadFetcher::records() const {
  const auto owner = owner_.hold();
  if (pir_->hintless) return pir_->hintless->records();
  return pir_->info->shape.records;
}

bool PayloadFetcher::hintless() const {
  const auto owner = owner_.hold();
  return pir_->hintless != nullptr;
}

Result<std::string> PayloadFetcher::fetch(std::uint64_t doc, FetchTiming* timing) {
  const auto owner = owner_.hold();
  if (options_.database != v1::PIR_DATABASE_PAYLOADS) {
    return failed_precondition_error("fetch(): this fetcher reads the IVF lists' database");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto record, fetch_record(doc, timing));
  return index::PayloadStore::decode_record(record.data(), record.size());
}

Result<std::vector<std::uint8_t>> PayloadFetcher::fetch_record(std::uint64_t doc,
                                                               FetchTiming* timing) {
  const auto owner = owner_.hold();
  if (doc >= records()) {
    return out_of_range_error("record " + std::to_string(doc) + " outside the PIR database's " +
                              std::to_string(records()));
  }
  const std::uint64_t one[1] = {doc};
  if (pir_->hintless) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto records, fetch_records(one, timing));  // verified there
    return std::move(records.front());
  }
  std::vector<std::vector<std::uint8_t>> got;
  PRIVSEARCH_ASSIGN_OR_RETURN(auto record, fetch_zippir_record(doc, timing));
  got.push_back(std::move(record));
  PRIVSEARCH_RETURN_IF_ERROR(core::verify_records(pir_options(), one, got));
  return std::move(got.front());
}

Status PayloadFetcher::align_to_ready_index() {
  std::uint64_t index = 0;
  PRIVSEARCH_RETURN_IF_ERROR(wait_for_ready_index(index));
  if (index != pir_->client->next_query_index()) {
    if (precompute_.valid()) PRIVSEARCH_RETURN_IF_ERROR(precompute_.get());
    PRIVSEARCH_RETURN_IF_ERROR(pir_->client->skip_to_query_index(index));
  }
  if (precompute_.valid()) PRIVSEARCH_RETURN_IF_ERROR(precompute_.get());
  return Status();
}

// One ZipPIR query and its decoded record, unverified (fetch_record and fetch_records check it).
Result<std::vector<std::uint8_t>> PayloadFetcher::fetch_zippir_record(std::uint64_t doc,
                                                                      FetchTiming* timing) {
  const auto t_all = Clock::now();
  FetchTiming t;
  for (int attempt = 0;; ++attempt) {
    auto t0 = Clock::now();
    const Status ready = align_to_ready_index();
    if (ready.code() == StatusCode::kNotFound && attempt == 0) {
      PRIVSEARCH_RETURN_IF_ERROR(setup());  // provider restarted: register again
      continue;
    }
    PRIVSEARCH_RETURN_IF_ERROR(ready);
    t.wait_ms = ms_since(t0);
    t0 = Clock::now();
    std::optional<pir::ZipPirPendingQuery> pending;
    PRIVSEARCH_ASSIGN_OR_RETURN(auto query,
                                pir_->client->query(doc, prng_, pending, options_.threads));
    t.query_ms = ms_since(t0);
    t.query_bytes = query.size();
    v1::PirQueryRequest req;
    req.set_artifact_version(version_);
    req.set_query(to_string(query));
    req.set_database(options_.database);
    t0 = Clock::now();
    auto answered = transport_.pir_query(req);
    if (!answered.ok() && answered.status().code() == StatusCode::kUnavailable && attempt == 0) {
      // The replica went away mid-query (behind a balancer another one answers the retry).
      // Whether or not this index was answered, it is spent: the retry is a new query under
      // the next index, never this one again.
      continue;
    }
    PRIVSEARCH_ASSIGN_OR_RETURN(v1::PirQueryResponse resp, std::move(answered));
    t.rpc_ms = ms_since(t0);
    if (resp.has_error()) {
      const Status s = from_error(resp.error());
      if (s.code() == StatusCode::kNotFound && attempt == 0) {
        PRIVSEARCH_RETURN_IF_ERROR(setup());
        continue;
      }
      return s;
    }
    t.provider_ms = resp.provider_ms();
    t.response_bytes = resp.answer().size();
    t0 = Clock::now();
    auto record = pir_->client->extract(*pending, byte_view(resp.answer()), options_.threads);
    t.extract_ms = ms_since(t0);
    // The next fetch's offsets, off the critical path, whether or not this answer decoded (a
    // failed one must not make the next query slower: that would tell the provider it failed).
    precompute_async();
    PRIVSEARCH_RETURN_IF_ERROR(record.status());
    t.total_ms = ms_since(t_all);
    if (timing != nullptr) *timing = t;
    return std::move(record).value();
  }
}

}  // namespace privsearch::client
