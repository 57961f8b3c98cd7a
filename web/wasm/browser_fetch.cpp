// BrowserClient's private fetch (browser_client.h): hintless PIR over the payloads' database, the
// same steps as the native client's (client/payload_fetcher_hintless.cpp) without the transport.
// Every query draws a fresh LWE secret from the page's one CSPRNG (seeded by
// crypto.getRandomValues through emscripten's getentropy); the secret stays in this object until
// its answer is decoded or the fetch is dropped.
#include <fmt/format.h>

#include <chrono>

#include "browser_client.h"
#include "core/bytes.h"
#include "core/elapsed.h"
#include "index/artifacts/payload_store.h"
#include "pir/hintless/messages.h"

namespace privsearch::web {
namespace {

using Clock = std::chrono::steady_clock;

// PirBackendKind.PIR_BACKEND_HINTLESS (protocol/privsearch.proto).
constexpr int kHintlessBackend = 1;
// At most this many fetches prepared and not finished (as for searches).
constexpr std::size_t kMaxPendingFetches = 16;

}  // namespace

Status BrowserClient::pir_agree(int backend, const std::string& info) {
  const auto owner = owner_.hold();
  if (backend != kHintlessBackend) {
    return failed_precondition_error(
        "the provider serves payloads by ZipPIR; the page fetches privately by hintless PIR "
        "only (start the provider with --pir-backend hintless, the default)");
  }
  if (!payload_shape_) {
    return failed_precondition_error("this index has no payloads to fetch");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto pub,
                              pir::hintless::decode_public_info(byte_view(info), false));
  if (pub.shape.records != payload_shape_->records ||
      pub.shape.record_bytes != payload_shape_->record_bytes) {
    return failed_precondition_error(fmt::format(
        "the provider's PIR database holds {} records of {} bytes; the checked index has {} of "
        "{}: refusing a database of another shape",
        pub.shape.records, pub.shape.record_bytes, payload_shape_->records,
        payload_shape_->record_bytes));
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(auto c, pir::hintless::HintlessClient::create(pub.params, pub.shape));
  pir_.emplace(std::move(c));
  fetches_.clear();
  fetch_docs_.clear();
  return Status();
}

Result<PreparedFetch> BrowserClient::prepare_fetch(std::uint64_t doc) {
  const auto owner = owner_.hold();
  if (!pir_) return failed_precondition_error("prepare_fetch() before pir_agree()");
  if (doc >= pir_->shape().records) {
    return out_of_range_error(
        fmt::format("document {} is outside the {} payloads", doc, pir_->shape().records));
  }
  const auto t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(auto made, pir_->make_query(doc, prng_));
  PreparedFetch out;
  out.query = to_byte_string(pir::hintless::encode_query(pir_->params(), made.first));
  out.id = next_id_++;
  if (fetches_.size() >= kMaxPendingFetches) {  // the oldest
    fetch_docs_.erase(fetches_.begin()->first);
    fetches_.erase(fetches_.begin());
  }
  fetches_.emplace(out.id, std::move(made.second));
  fetch_docs_.emplace(out.id, doc);
  out.query_ms = ms_since(t0);
  return out;
}

Result<FinishedFetch> BrowserClient::finish_fetch(std::uint32_t id, const std::string& answer) {
  const auto owner = owner_.hold();
  auto it = fetches_.find(id);
  if (it == fetches_.end() || !pir_) {
    return not_found_error(fmt::format("no prepared fetch {}", id));
  }
  const pir::hintless::HintlessSecret secret = std::move(it->second);
  fetches_.erase(it);
  const std::uint64_t doc = fetch_docs_.at(id);
  fetch_docs_.erase(id);
  const auto t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(
      const auto response,
      pir::hintless::decode_response(pir_->params(), pir_->shape(), byte_view(answer)));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto record, pir_->decode(secret, response));
  // The record the signed index holds for `doc`, or DATA_LOSS (record_digests.h).
  if (payload_digests_) PRIVSEARCH_RETURN_IF_ERROR(payload_digests_->check(doc, record));
  FinishedFetch out;
  PRIVSEARCH_ASSIGN_OR_RETURN(out.text,
                              index::PayloadStore::decode_record(record.data(), record.size()));
  out.decode_ms = ms_since(t0);
  return out;
}

}  // namespace privsearch::web
