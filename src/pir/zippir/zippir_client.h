// ZipPIR client side: key generation, offsets, queries, extraction (client library: holds the
// Paillier private key and the LWE secrets). See zippir_common.h for the protocol.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/owner_lock.h"
#include "pir/paillier/paillier_private.h"
#include "pir/zippir/zippir_common.h"

namespace privsearch::pir {

// A query the client has sent and must remember until the answer arrives. Holds the secret s.
class ZipPirPendingQuery {
 public:
  ZipPirPendingQuery(ZipPirPendingQuery&&) noexcept = default;
  ZipPirPendingQuery& operator=(ZipPirPendingQuery&&) noexcept = default;
  std::uint64_t query_index() const { return query_index_; }
  std::size_t record() const { return record_; }

 private:
  friend class ZipPirClient;
  friend class ZipPirRecordDecoder;
  ZipPirPendingQuery(LweSecret s, std::uint64_t index, std::size_t record, std::uint32_t weight)
      : secret_(std::move(s)), query_index_(index), record_(record), weight_(weight) {}
  LweSecret secret_;
  std::uint64_t query_index_;
  std::size_t record_;
  std::uint32_t weight_;  // |s|
};

struct ZipPirClientTimings {
  double offsets_ms = 0;  // n Paillier decryptions (precompute)
  double query_ms = 0;    // LWE query + offsets
  double extract_ms = 0;
};

class ZipPirClient {
 public:
  // Generates the Paillier key and seed.
  static Result<ZipPirClient> create(const ZipPirPublicInfo& info, Prng& prng);

  ZipPirClient(ZipPirClient&&) noexcept = default;
  ZipPirClient& operator=(ZipPirClient&&) noexcept = default;

  std::vector<std::uint8_t> setup_message() const;
  std::uint64_t client_id() const { return client_id_; }
  // Decrypts ck_r for query index `index` ahead of time (the n Paillier decryptions).
  Status precompute_query(std::uint64_t index, unsigned threads);
  // Stores a hint exported by the server (client-storage variant).
  Status store_hint(std::span<const std::uint8_t> hint_message);
  // Builds the query for `record` with the next query index (precomputing it if needed).
  Result<std::vector<std::uint8_t>> query(std::size_t record, Prng& prng,
                                          std::optional<ZipPirPendingQuery>& pending,
                                          unsigned threads = 1);
  // Recovers the record bytes from the server's response.
  // `threads` decrypt the needed packed rows in parallel.
  Result<std::vector<std::uint8_t>> extract(const ZipPirPendingQuery& pending,
                                            std::span<const std::uint8_t> response,
                                            unsigned threads = 1);

  const ZipPirClientTimings& timings() const { return timings_; }
  std::uint64_t next_query_index() const { return next_index_; }
  // Moves the query index forward (never back: an index is used once) to one the server has a
  // hint for; drops offsets precomputed for skipped indices.
  Status skip_to_query_index(std::uint64_t index);

 private:
  ZipPirClient(ZipPirPublicInfo info, PaillierKeyPair keys)
      : info_(std::move(info)), keys_(std::make_unique<PaillierKeyPair>(std::move(keys))) {}
  // The response's packed rows that hold the pending record, decrypted (rows i0.. of it).
  struct RecordRows {
    std::size_t i0 = 0;
    std::vector<mpz_class> plain;
    bool t_only = false;
  };
  Result<RecordRows> decrypt_record_rows(const ZipPirPendingQuery& pending,
                                         std::span<const std::uint8_t> response,
                                         unsigned threads) const;
  ZipPirPublicInfo info_;
  std::unique_ptr<PaillierKeyPair> keys_;
  std::vector<std::uint8_t> seed_;
  std::uint64_t client_id_ = 0;  // SHA-256 of the setup message, computed once
  std::uint64_t next_index_ = 0;
  std::map<std::uint64_t, std::vector<mpz_class>> offsets_;  // index -> r (secret)
  std::map<std::uint64_t, std::vector<mpz_class>> hints_;    // client-storage variant
  // Held by every method that reads or consumes the offsets or the query index: two
  // concurrent queries never share an index and its one-time offsets (core/owner_lock.h).
  OwnerLock owner_;
  // The fork generation of create(): offsets and query indices drawn before a fork are shared
  // with the parent, so the client refuses to query in a child (core/csprng.h).
  std::uint64_t fork_generation_ = Prng::current_fork_generation();
  Status check_not_forked() const;
  ZipPirClientTimings timings_;
};

}  // namespace privsearch::pir
