// BrowserClient's private fetch (browser_client.h): hintless PIR over the payloads' database
// through the client core's PirClient (client/core/pir_client.h), the native fetcher's client.
// Every query draws a fresh LWE secret from the page's one CSPRNG (seeded by
// crypto.getRandomValues through emscripten's getentropy); the secrets stay in their batch until
// its answers are decoded or the fetch is dropped.
#include <fmt/format.h>

#include <chrono>

#include "browser_client.h"
#include "core/bytes.h"
#include "core/elapsed.h"
#include "index/artifacts/payload_store.h"

namespace privsearch::web {
namespace {

using Clock = std::chrono::steady_clock;

// PirBackendKind.PIR_BACKEND_HINTLESS (protocol/privsearch.proto).
constexpr int kHintlessBackend = 1;
// At most this many fetches prepared and not finished (as for searches).
constexpr std::size_t kMaxPendingFetches = 16;

}  // namespace

Status BrowserClient::pir_agree(int backend, const std::string& info, std::size_t max_batch) {
  const auto owner = owner_.hold();
  if (backend != kHintlessBackend) {
    return failed_precondition_error(
        "the provider serves payloads by ZipPIR; the page fetches privately by hintless PIR "
        "only (start the provider with --pir-backend hintless, the default)");
  }
  if (!payload_shape_) {
    return failed_precondition_error("this index has no payloads to fetch");
  }
  pir_options_.expected_shape = payload_shape_;
  pir_options_.record_digests = payload_digests_;
  pir_options_.provider_max_batch = max_batch;
  PRIVSEARCH_ASSIGN_OR_RETURN(
      pir_, client::core::make_hintless_pir_client(byte_view(info), pir_options_));
  fetches_.clear();
  return Status();
}

Result<PreparedFetch> BrowserClient::prepare_fetch(std::span<const std::uint64_t> docs) {
  const auto owner = owner_.hold();
  if (!pir_) return failed_precondition_error("prepare_fetch() before pir_agree()");
  const auto t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(auto batch, pir_->prepare(docs, prng_));
  PreparedFetch out;
  out.queries = batch.queries;
  out.id = next_id_++;
  if (fetches_.size() >= kMaxPendingFetches) fetches_.erase(fetches_.begin());  // the oldest
  fetches_.emplace(out.id, std::move(batch));
  out.query_ms = ms_since(t0);
  return out;
}

Result<FinishedFetch> BrowserClient::finish_fetch(std::uint32_t id,
                                                  const std::vector<std::string>& answers) {
  const auto owner = owner_.hold();
  auto it = fetches_.find(id);
  if (it == fetches_.end() || !pir_) {
    return not_found_error(fmt::format("no prepared fetch {}", id));
  }
  client::core::PirBatch batch = std::move(it->second);
  fetches_.erase(it);
  const std::vector<std::uint64_t> docs = batch.indices;
  const auto t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto records, pir_->finish(std::move(batch), answers));
  // The records the signed index holds, or DATA_LOSS (record_digests.h).
  PRIVSEARCH_RETURN_IF_ERROR(client::core::verify_records(pir_options_, docs, records));
  FinishedFetch out;
  for (const auto& record : records) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto doc,
                                index::PayloadStore::decode_payload(record.data(), record.size()));
    out.texts.push_back(std::move(doc.text));
    out.cut.push_back(doc.cut);
  }
  out.decode_ms = ms_since(t0);
  return out;
}

}  // namespace privsearch::web
