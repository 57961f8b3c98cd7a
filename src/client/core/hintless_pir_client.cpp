// The hintless backend's PirClient (pir_client.h): no setup, a fresh secret per query (YPIR+SP:
// a reused secret would reveal the difference of two indices), answers decoded in order.
#include <fmt/format.h>

#include <algorithm>

#include "client/core/pir_client.h"
#include "core/bytes.h"
#include "pir/hintless/client/client.h"
#include "pir/hintless/messages.h"

namespace privsearch::client::core {
namespace {

using pir::hintless::HintlessClient;
using pir::hintless::HintlessSecret;

struct HintlessSecrets final : PirSecrets {
  std::vector<HintlessSecret> secrets;
};

class HintlessPirClient final : public PirClient {
 public:
  HintlessPirClient(HintlessClient client, std::size_t max_batch)
      : client_(std::move(client)), max_batch_(max_batch) {}

  std::uint64_t records() const override { return client_.shape().records; }
  std::uint64_t record_bytes() const override { return client_.shape().record_bytes; }
  std::size_t max_batch() const override { return max_batch_; }

  Result<PirBatch> prepare(std::span<const std::uint64_t> indices, Prng& prng) const override {
    if (indices.size() > max_batch_) {
      return invalid_argument_error(
          fmt::format("{} PIR queries in one batch; at most {}", indices.size(), max_batch_));
    }
    PirBatch batch;
    auto secrets = std::make_unique<HintlessSecrets>();
    for (const std::uint64_t index : indices) {
      if (index >= records()) {
        return out_of_range_error(
            fmt::format("record {} outside the PIR database's {}", index, records()));
      }
      PRIVSEARCH_ASSIGN_OR_RETURN(auto made, client_.make_query(index, prng));
      batch.queries.push_back(
          to_byte_string(pir::hintless::encode_query(client_.params(), made.first)));
      secrets->secrets.push_back(std::move(made.second));
      batch.indices.push_back(index);
    }
    batch.secrets = std::move(secrets);
    return batch;
  }

  Result<std::vector<std::vector<std::uint8_t>>> finish(
      PirBatch batch, std::span<const std::string> answers) const override {
    const auto* secrets = dynamic_cast<const HintlessSecrets*>(batch.secrets.get());
    if (secrets == nullptr || secrets->secrets.size() != batch.indices.size()) {
      return failed_precondition_error("finish() of a batch this client did not prepare");
    }
    if (answers.size() != batch.indices.size()) {
      return data_loss_error(fmt::format("the provider answered {} of {} PIR queries",
                                         answers.size(), batch.indices.size()));
    }
    std::vector<std::vector<std::uint8_t>> out;
    for (std::size_t k = 0; k < answers.size(); ++k) {
      PRIVSEARCH_ASSIGN_OR_RETURN(
          const auto response,
          pir::hintless::decode_response(client_.params(), client_.shape(), byte_view(answers[k])));
      PRIVSEARCH_ASSIGN_OR_RETURN(auto record, client_.decode(secrets->secrets[k], response));
      out.push_back(std::move(record));
    }
    return out;
  }

 private:
  HintlessClient client_;
  std::size_t max_batch_;
};

}  // namespace

Status check_pir_shape(std::uint64_t records, std::uint64_t record_bytes,
                       const PirClientOptions& options) {
  if (options.payload_records && record_bytes < 4) {
    return data_loss_error(
        fmt::format("the provider's PIR records of {} bytes cannot hold a payload (4-byte length)",
                    record_bytes));
  }
  const auto& want = options.expected_shape;
  if (want && (records != want->records || record_bytes != want->record_bytes)) {
    return failed_precondition_error(fmt::format(
        "the provider's PIR database holds {} records of {} bytes; the signed index has {} of "
        "{}: refusing a database of another shape",
        records, record_bytes, want->records, want->record_bytes));
  }
  return Status();
}

Status verify_records(const PirClientOptions& options, std::span<const std::uint64_t> indices,
                      const std::vector<std::vector<std::uint8_t>>& records) {
  if (!options.payload_records || !options.record_digests) return Status();
  if (records.size() != indices.size()) {
    return data_loss_error(
        fmt::format("{} records for {} fetched indices", records.size(), indices.size()));
  }
  for (std::size_t i = 0; i < indices.size(); ++i) {
    PRIVSEARCH_RETURN_IF_ERROR(options.record_digests->check(indices[i], records[i]));
  }
  return Status();
}

Result<std::unique_ptr<PirClient>> make_hintless_pir_client(
    std::span<const std::uint8_t> public_info, const PirClientOptions& options) {
  PRIVSEARCH_ASSIGN_OR_RETURN(
      const auto pub, pir::hintless::decode_public_info(public_info, options.allow_insecure));
  PRIVSEARCH_RETURN_IF_ERROR(check_pir_shape(pub.shape.records, pub.shape.record_bytes, options));
  // One query must fit one request: a provider advertising a shape whose queries exceed the
  // budget (up to 2^22 columns would be ~29 MB) is refused before anything is sized from it.
  const std::size_t one = pir::hintless::hintless_query_bytes(pub.params, pub.shape.columns);
  if (one > options.request_budget) {
    return failed_precondition_error(fmt::format(
        "the provider's hintless PIR database needs {}-byte queries, above the request budget "
        "of {} bytes (this client's, within the provider's message cap)",
        one, options.request_budget));
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(auto client, HintlessClient::create(pub.params, pub.shape));
  const std::size_t by_bytes = std::max<std::size_t>(1, options.request_budget / one);
  const std::size_t max_batch =
      std::max<std::size_t>(1, std::min(options.provider_max_batch, by_bytes));
  return std::unique_ptr<PirClient>(new HintlessPirClient(std::move(client), max_batch));
}

}  // namespace privsearch::client::core
