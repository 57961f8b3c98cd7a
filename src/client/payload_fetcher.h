// Private payload fetch (client side): after ranking, read the chosen documents by PIR so the
// provider learns nothing of which ones (DESIGN.md; docs/SECURITY.md "leakage contract").
//
// The backend is the provider's (PirInfo.backend). Hintless (the default, pir/hintless): no setup
// and nothing to wait for; every query draws a fresh secret and packing key, and fetch_records
// sends several records' queries in one PirQuery (at most PirInfo.max_batch, and no more than
// fit kMaxRequestBytes), answered in one pass over the database. ZipPIR, as follows:
//
// create(): PirInfo (public parameters and database shape, version-checked against the index),
// Paillier key generation, PirSetup (~413 bytes). The per-query offsets r = Dec(ck_r) (n Paillier
// decryptions, seconds) are computed on a background thread (precompute_async) so they are off
// the critical path; the provider meanwhile computes its matching hint offline. fetch(): wait for
// the provider's hint of the next query index (PirStatus), query, decrypt, decode the record.
// Recovery: UNKNOWN_PIR_CLIENT (provider restarted) -> set up again once; PIR_VERSION_MISMATCH
// (index rebuilt) -> kFailedPrecondition telling the user to refresh the index.
// Thread safety: every fetch holds the fetcher's OwnerLock (core/owner_lock.h): concurrent
// callers are served one after the other, each under its own query index and offsets.
#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "client/core/pir_client.h"
#include "client/provider_client.h"
#include "core/csprng.h"
#include "core/owner_lock.h"
#include "core/status.h"
#include "index/artifacts/payload_store.h"
#include "index/artifacts/record_digests.h"

namespace privsearch::pir {
struct DatabaseShape;
}  // namespace privsearch::pir

namespace privsearch::client {

struct FetchOptions {
  unsigned threads = 2;         // client decryptions (offsets, extract)
  int wait_ms = 300000;         // longest wait for the provider's offline hint
  bool allow_insecure = false;  // accept test-only PIR parameters (tests)
  // The database fetched from: the payloads, or the IVF lists (client/ivf_lists.h's private
  // mode; fetch_record only).
  v1::PirDatabase database = v1::PIR_DATABASE_PAYLOADS;
  // The shape the signed index implies (index::payload_shape; SearchClient::payload_shape):
  // a provider whose PIR database has other records or record sizes is refused at setup.
  std::optional<index::PayloadShape> expected_shape;
  // The signed index's payload record digests (index/artifacts/record_digests.h;
  // SearchClient::payload_digests): every payload record fetched is checked after decoding, and
  // one that differs fails the call with kDataLoss once all of its queries were answered (no
  // retry: a failed record changes no later request). Null: an index built before digests;
  // records are then unverified.
  std::shared_ptr<const index::RecordDigests> record_digests;
};

struct FetchTiming {
  double wait_ms = 0;      // waiting for offsets and the provider's hint
  double query_ms = 0;     // building the query
  double rpc_ms = 0;       // PirQuery round trip
  double provider_ms = 0;  // inside the provider
  double extract_ms = 0;
  double total_ms = 0;
  std::size_t query_bytes = 0, response_bytes = 0;
};

class PayloadFetcher {
 public:
  static Result<std::unique_ptr<PayloadFetcher>> create(ProviderClient& transport,
                                                        std::string artifact_version,
                                                        FetchOptions options);
  ~PayloadFetcher();

  // Starts the offsets of the next query index on a background thread.
  void precompute_async();
  // The payload ("title\n\ntext") of document `doc`.
  Result<std::string> fetch(std::uint64_t doc, FetchTiming* timing = nullptr);
  // Record `index` of the database as stored (record_bytes() bytes).
  Result<std::vector<std::uint8_t>> fetch_record(std::uint64_t index,
                                                 FetchTiming* timing = nullptr);
  // Several records (hintless: in as few PirQuery calls as the batch limits allow; ZipPIR: one
  // after the other). `timing` sums the calls.
  Result<std::vector<std::vector<std::uint8_t>>> fetch_records(
      std::span<const std::uint64_t> indices, FetchTiming* timing = nullptr);
  // The payloads of several documents (fetch() for each, batched as fetch_records).
  // The same with each record's cut flag (index::DecodedPayload: the document was longer than
  // its record).
  Result<std::vector<index::DecodedPayload>> fetch_documents(std::span<const std::uint64_t> docs,
                                                             FetchTiming* timing = nullptr);
  Result<std::vector<std::string>> fetch_many(std::span<const std::uint64_t> docs,
                                              FetchTiming* timing = nullptr);
  bool hintless() const;
  // The largest PirQuery a batch is packed into (the provider's default message cap is 8 MB).
  static constexpr std::size_t kMaxRequestBytes = std::size_t{6} << 20;
  std::uint64_t record_bytes() const;
  std::uint64_t records() const;

  // After the provider rebuilt its database in place (same shape, same A seed) and the local
  // index was refreshed: continue under the new version without a new setup; the provider has
  // recomputed this client's hints on its own.
  void set_artifact_version(std::string version) { version_ = std::move(version); }
  std::size_t setups() const { return setups_; }

  std::uint64_t pir_db_bytes() const { return db_bytes_; }
  std::size_t setup_bytes() const { return setup_bytes_; }

 private:
  PayloadFetcher(ProviderClient& transport, std::string version, FetchOptions options);
  Status setup();
  Status setup_hintless(const v1::PirInfo& info);
  Status wait_for_ready_index(std::uint64_t& index);
  // The provider's next ready query index with its offsets made (kNotFound: set up again).
  Status align_to_ready_index();
  Result<std::vector<std::uint8_t>> fetch_zippir_record(std::uint64_t doc, FetchTiming* timing);
  // One PirQuery of hintless queries for `indices`, decoded in order.
  Status fetch_hintless_batch(std::span<const std::uint64_t> indices,
                              std::vector<std::vector<std::uint8_t>>& out, FetchTiming& timing);
  // What the PIR clients check (the shape, the digests), from the FetchOptions.
  core::PirClientOptions pir_options() const;
  static Status from_error(const v1::Error& e);

  ProviderClient& transport_;
  std::string version_;
  FetchOptions options_;
  // The ZipPIR client (Paillier private key, LWE secrets): GMP types stay in the .cpp.
  struct Pir;
  std::unique_ptr<Pir> pir_;
  std::uint64_t client_id_ = 0;
  std::uint64_t db_bytes_ = 0;
  std::size_t setup_bytes_ = 0;
  std::size_t setups_ = 0;
  std::future<Status> precompute_;
  Prng prng_ = Prng::create();
  OwnerLock owner_;
};

}  // namespace privsearch::client
