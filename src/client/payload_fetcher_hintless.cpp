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

Status PayloadFetcher::setup_hintless(const v1::PirInfo& info) {
  using namespace privsearch::pir::hintless;
  PRIVSEARCH_ASSIGN_OR_RETURN(const HintlessPublicInfo pub,
                              decode_public_info(byte_view(info.info()), options_.allow_insecure));
  PRIVSEARCH_RETURN_IF_ERROR(check_shape(pub.shape.records, pub.shape.record_bytes));
  // One query must fit one request: a provider advertising a shape whose queries exceed the
  // budget (up to 2^22 columns would be ~29 MB) is refused before anything is sized from it.
  // The request budget: this client's, within the provider's message cap (ServerInfo).
  std::size_t budget = kMaxRequestBytes;
  if (auto si = transport_.server_info();
      si.ok() && si->limits().max_message_bytes() > (1u << 17)) {
    budget = std::min<std::size_t>(budget, si->limits().max_message_bytes() - (1u << 16));
  }
  const std::size_t one = hintless_query_bytes(pub.params, pub.shape.columns);
  if (one > budget) {
    return failed_precondition_error(
        "the provider's hintless PIR database needs " + std::to_string(one) +
        "-byte queries, above the request budget of " + std::to_string(budget) +
        " bytes (this client's, within the provider's message cap)");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(HintlessClient c, HintlessClient::create(pub.params, pub.shape));
  const std::size_t by_bytes = std::max<std::size_t>(1, budget / one);
  pir_->max_batch = std::max<std::size_t>(1, std::min<std::size_t>(info.max_batch(), by_bytes));
  pir_->hintless.emplace(std::move(c));
  pir_->client.reset();
  pir_->info.reset();
  setup_bytes_ = 0;
  return Status();
}

Status PayloadFetcher::fetch_hintless_batch(std::span<const std::uint64_t> indices,
                                            std::vector<std::vector<std::uint8_t>>& out,
                                            FetchTiming& t) {
  using namespace privsearch::pir::hintless;
  const HintlessClient& client = *pir_->hintless;
  auto t0 = Clock::now();
  std::vector<HintlessSecret> secrets;
  v1::PirQueryRequest req;
  req.set_artifact_version(version_);
  req.set_database(options_.database);
  for (const std::uint64_t index : indices) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto made, client.make_query(index, prng_));
    const auto bytes = encode_query(client.params(), made.first);
    t.query_bytes += bytes.size();
    req.add_queries(to_byte_string(bytes));
    secrets.push_back(std::move(made.second));
  }
  t.query_ms += ms_since(t0);
  t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(v1::PirQueryResponse resp, transport_.pir_query(req));
  t.rpc_ms += ms_since(t0);
  if (resp.has_error()) return from_error(resp.error());
  if (static_cast<std::size_t>(resp.answers_size()) != indices.size()) {
    return data_loss_error("the provider answered " + std::to_string(resp.answers_size()) + " of " +
                           std::to_string(indices.size()) + " PIR queries");
  }
  t.provider_ms += resp.provider_ms();
  t0 = Clock::now();
  for (std::size_t k = 0; k < indices.size(); ++k) {
    t.response_bytes += resp.answers(static_cast<int>(k)).size();
    PRIVSEARCH_ASSIGN_OR_RETURN(const HintlessResponse r,
                                decode_response(client.params(), client.shape(),
                                                byte_view(resp.answers(static_cast<int>(k)))));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto record, client.decode(secrets[k], r));
    out.push_back(std::move(record));
  }
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
    for (std::size_t first = 0; first < indices.size(); first += pir_->max_batch) {
      const std::size_t count = std::min(pir_->max_batch, indices.size() - first);
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
  PRIVSEARCH_RETURN_IF_ERROR(verify(indices, out));
  return out;
}

Status PayloadFetcher::verify(std::span<const std::uint64_t> indices,
                              const std::vector<std::vector<std::uint8_t>>& records) const {
  if (!options_.record_digests || options_.database != v1::PIR_DATABASE_PAYLOADS) return Status();
  for (std::size_t i = 0; i < indices.size() && i < records.size(); ++i) {
    PRIVSEARCH_RETURN_IF_ERROR(options_.record_digests->check(indices[i], records[i]));
  }
  return Status();
}

Result<std::vector<std::string>> PayloadFetcher::fetch_many(std::span<const std::uint64_t> docs,
                                                            FetchTiming* timing) {
  const auto owner = owner_.hold();
  if (options_.database != v1::PIR_DATABASE_PAYLOADS) {
    return failed_precondition_error("fetch_many(): this fetcher reads the IVF lists' database");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto records, fetch_records(docs, timing));
  std::vector<std::string> out;
  for (const auto& r : records) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto text, index::PayloadStore::decode_record(r.data(), r.size()));
    out.push_back(std::move(text));
  }
  return out;
}

}  // namespace privsearch::client
