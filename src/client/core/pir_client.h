// The client half of a PIR backend, mirroring the provider's protocol::PirBackend: the public
// info it is made from (PirInfo.info), the queries of one batch (PirQueryRequest.queries) and
// the records its answers decode to. No transport and no protobuf: SearchClient's PayloadFetcher
// and the WebAssembly core both move the bytes, and both get the same checks from here.
//
//   pir     = make_hintless_pir_client(info bytes, options)   shape checked against the index
//   batch   = pir->prepare(indices, prng)                      fresh secrets, kept in the batch
//   records = pir->finish(std::move(batch), answers)           decoded, in order
//   verify_records(options, indices, records)                  each against the signed digests
//
// Records are verified once every query of a fetch was answered (verify_records, after the last
// batch), never between batches: a fetch that stopped at a bad record would send fewer queries
// than one that did not, and tell the provider its tampering was seen.
// A batch's secrets belong to it alone: finish() consumes the batch, and a batch dropped
// without an answer wipes them (the secret types are move-only and zeroize; a retry is a new
// batch). ZipPIR's client talks to the provider between queries (setup, hint status) and stays
// in PayloadFetcher.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/csprng.h"
#include "core/status.h"
#include "index/artifacts/payload_store.h"
#include "index/artifacts/record_digests.h"

namespace privsearch::client::core {

struct PirClientOptions {
  bool allow_insecure = false;  // accept test-only parameters (tests)
  // The payloads' database: records carry a 4-byte length (at least 4 bytes each) and are
  // checked against `record_digests`. False for the IVF lists' database.
  bool payload_records = true;
  // The shape the signed index implies (index::payload_shape): another one is refused.
  std::optional<index::PayloadShape> expected_shape;
  // The signed index's digests of the payload records (null: an index built before them; the
  // records are then unverified).
  std::shared_ptr<const index::RecordDigests> record_digests;
  // Bytes one request may take (this client's budget within the provider's message cap), and
  // the provider's PirInfo.max_batch: together they bound the queries per request.
  std::size_t request_budget = std::size_t{6} << 20;
  std::size_t provider_max_batch = 1;
};

// The secrets of a prepared batch (backend-specific types that wipe themselves).
class PirSecrets {
 public:
  virtual ~PirSecrets() = default;
};

struct PirBatch {
  std::vector<std::uint64_t> indices;  // the records asked for, in query order
  std::vector<std::string> queries;    // PirQueryRequest.queries, one per index
  std::unique_ptr<PirSecrets> secrets;
};

class PirClient {
 public:
  virtual ~PirClient() = default;
  virtual std::uint64_t records() const = 0;
  virtual std::uint64_t record_bytes() const = 0;
  // The most queries one request carries (the provider's limit and the request budget).
  virtual std::size_t max_batch() const = 0;
  // Queries for `indices` (at most max_batch()) under fresh secrets; kOutOfRange for an index
  // past the database.
  virtual Result<PirBatch> prepare(std::span<const std::uint64_t> indices, Prng& prng) const = 0;
  // The records of `batch` from the provider's answers, in its order: kDataLoss for another
  // number of answers or an answer that does not decode. Not yet verified (verify_records).
  virtual Result<std::vector<std::vector<std::uint8_t>>> finish(
      PirBatch batch, std::span<const std::string> answers) const = 0;
};

// The shape a provider announced against what the options expect (both backends use it).
Status check_pir_shape(std::uint64_t records, std::uint64_t record_bytes,
                       const PirClientOptions& options);

// Each payload record against the signed index's digest (options.record_digests; nothing to
// check for the IVF lists' database or an index without digests): kDataLoss naming the first
// record that differs.
Status verify_records(const PirClientOptions& options, std::span<const std::uint64_t> indices,
                      const std::vector<std::vector<std::uint8_t>>& records);

// The hintless backend (pir/hintless): `public_info` is PirInfo.info. kFailedPrecondition for a
// database of another shape than the signed index's, or whose one query exceeds the budget.
Result<std::unique_ptr<PirClient>> make_hintless_pir_client(
    std::span<const std::uint8_t> public_info, const PirClientOptions& options);

}  // namespace privsearch::client::core
