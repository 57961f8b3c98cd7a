// PayloadFetcher's hintless path (payload_fetcher.h): no setup, batched queries.
#include <algorithm>

#include "client/payload_fetcher.h"
#include "client/payload_fetcher_state.h"
#include "core/bytes.h"
#include "core/elapsed.h"

namespace privsearch::client {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

core::PirClientOptions PayloadFetcher::pir_options() const {
  core::PirClientOptions o;
  o.allow_insecure = options_.allow_insecure;
  o.payload_records = options_.database == v1::PIR_DATABASE_PAYLOADS;
  o.expected_shape = options_.expected_shape;
  o.record_digests = options_.record_digests;
  return o;
}

Status PayloadFetcher::setup_hintless(const v1::PirInfo& info) {
  auto options = pir_options();
  // The request budget: this client's, within the provider's message cap (ServerInfo).
  options.request_budget = kMaxRequestBytes;
  if (auto si = transport_.server_info();
      si.ok() && si->limits().max_message_bytes() > (1u << 17)) {
    options.request_budget =
        std::min<std::size_t>(kMaxRequestBytes, si->limits().max_message_bytes() - (1u << 16));
  }
  options.provider_max_batch = info.max_batch();
  PRIVSEARCH_ASSIGN_OR_RETURN(pir_->hintless,
                              core::make_hintless_pir_client(byte_view(info.info()), options));
  pir_->client.reset();
  pir_->info.reset();
  setup_bytes_ = 0;
  return Status();
}

Status PayloadFetcher::fetch_hintless_batch(std::span<const std::uint64_t> indices,
                                            std::vector<std::vector<std::uint8_t>>& out,
                                            FetchTiming& t) {
  auto t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(auto batch, pir_->hintless->prepare(indices, prng_));
  v1::PirQueryRequest req;
  req.set_artifact_version(version_);
  req.set_database(options_.database);
  for (const auto& query : batch.queries) {
    t.query_bytes += query.size();
    req.add_queries(query);
  }
  t.query_ms += ms_since(t0);
  t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(v1::PirQueryResponse resp, transport_.pir_query(req));
  t.rpc_ms += ms_since(t0);
  if (resp.has_error()) return from_error(resp.error());
  t.provider_ms += resp.provider_ms();
  t0 = Clock::now();
  for (const auto& answer : resp.answers()) t.response_bytes += answer.size();
  const std::vector<std::string> answers(resp.answers().begin(), resp.answers().end());
  PRIVSEARCH_ASSIGN_OR_RETURN(auto records, pir_->hintless->finish(std::move(batch), answers));
  for (auto& record : records) out.push_back(std::move(record));
  t.extract_ms += ms_since(t0);
  return Status();
}

Result<std::vector<std::vector<std::uint8_t>>> PayloadFetcher::fetch_records(
    std::span<const std::uint64_t> indices, FetchTiming* timing) {
  const auto owner = owner_.hold();
  std::vector<std::vector<std::uint8_t>> out;
  FetchTiming t;
  const auto t_all = Clock::now();
  for (const std::uint64_t index : indices) {
    if (index >= records()) {
      return out_of_range_error("record " + std::to_string(index) + " outside the PIR database's " +
                                std::to_string(records()));
    }
  }
  if (!pir_->hintless) {
    for (const std::uint64_t index : indices) {
      FetchTiming one;
      PRIVSEARCH_ASSIGN_OR_RETURN(auto record, fetch_zippir_record(index, &one));
      out.push_back(std::move(record));
      t.wait_ms += one.wait_ms;
      t.query_ms += one.query_ms;
      t.rpc_ms += one.rpc_ms;
      t.provider_ms += one.provider_ms;
      t.extract_ms += one.extract_ms;
      t.query_bytes += one.query_bytes;
      t.response_bytes += one.response_bytes;
    }
  } else {
    const std::size_t max_batch = pir_->hintless->max_batch();
    for (std::size_t first = 0; first < indices.size(); first += max_batch) {
      const std::size_t count = std::min(max_batch, indices.size() - first);
      const auto batch = indices.subspan(first, count);
      Status s = fetch_hintless_batch(batch, out, t);
      if (s.code() == StatusCode::kUnavailable) {
        // The replica went away mid-query (behind a balancer another one answers): the retry is
        // a new batch under fresh secrets; the first one's are never used again.
        s = fetch_hintless_batch(batch, out, t);
      }
      PRIVSEARCH_RETURN_IF_ERROR(s);
    }
  }
  t.total_ms = ms_since(t_all);
  if (timing != nullptr) *timing = t;
  PRIVSEARCH_RETURN_IF_ERROR(core::verify_records(pir_options(), indices, out));
  return out;
}

Result<std::vector<index::DecodedPayload>> PayloadFetcher::fetch_documents(
    std::span<const std::uint64_t> docs, FetchTiming* timing) {
  const auto owner = owner_.hold();
  if (options_.database != v1::PIR_DATABASE_PAYLOADS) {
    return failed_precondition_error(
        "fetch_documents(): this fetcher reads the IVF lists' database");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto records, fetch_records(docs, timing));
  std::vector<index::DecodedPayload> out;
  for (const auto& r : records) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto doc, index::PayloadStore::decode_payload(r.data(), r.size()));
    out.push_back(std::move(doc));
  }
  return out;
}

Result<std::vector<std::string>> PayloadFetcher::fetch_many(std::span<const std::uint64_t> docs,
                                                            FetchTiming* timing) {
  PRIVSEARCH_ASSIGN_OR_RETURN(auto documents, fetch_documents(docs, timing));
  std::vector<std::string> out;
  for (auto& d : documents) out.push_back(std::move(d.text));
  return out;
}

}  // namespace privsearch::client
