// ZipPIR (arXiv 2603.09190, section 4): single-server PIR with no client storage beyond a
// Paillier key and a seed. Message-in / message-out; no transport.
//
//   Setup   client -> server  N (Paillier public key) and a 16-byte seed           (~413 B)
//   Hint    server, offline    per future query index: k_i = Enc(P_i . r), ck_r from the seed
//   Query   client -> server  ck_o = s - r mod N (n values) and qu = A s + e + Delta u_col
//   Answer  server            ans = D qu; t = P ck_o + pack(ans~) mod N (RNS, one CRT);
//                             response c_i = k_i (1 + t_i N) = Enc(T_i)   (one ciphertext per
//                             packed row: the paper's "Paillier addition" variant, 2/3 of the
//                             size of sending k and t apart)
//   Extract client            T_i = Dec(c_i) for the packed rows that hold its record, unpack
//                             the slots, remove carry and |s|, round.
// r = Dec(ck_r) costs n Paillier decryptions per query; precompute_query() does them ahead of
// time (the paper's client does them at query time).
// Client-storage variant (section 4.3): the server can hand the k_i of a query index to the
// client in advance (export_hint); the answer for that index then carries only t (Z_N values).
// Security: the server sees N, the seed, ck_o (uniform given r) and qu (LWE); the secret s, r,
// the Paillier key and the record index never leave the client. The server keeps per client
// only the k_i of precomputed queries (2 d1' |N| bits each) and forgets them once answered.
// Thread safety: ZipPirServer::answer is const except for the per-client hint queue, guarded by
// a mutex; ZipPirClient is single-threaded.
#pragma once

#include <gmpxx.h>

#include <cstddef>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "core/csprng.h"
#include "core/status.h"
#include "pir/lwe/database.h"
#include "pir/lwe/lwe.h"
#include "pir/paillier/paillier.h"
#include "pir/zippir/rns.h"
#include "pir/zippir/zippir_params.h"

namespace privsearch::pir {

inline constexpr std::size_t kZipPirSeedBytes = 16;

// What a client needs to know about a server's database (public).
struct ZipPirPublicInfo {
  ZipPirParams params;
  DatabaseShape shape;
  Seed a_seed{};

  std::uint64_t params_id() const { return params.id(shape); }
  std::vector<std::uint8_t> serialize() const;
  static Result<ZipPirPublicInfo> deserialize(std::span<const std::uint8_t> bytes,
                                              bool allow_insecure = false);
};

struct ZipPirServerLimits {
  std::size_t max_clients = 1024;
  std::size_t max_queued_queries = kZipPirMaxQueriesPerClient;
  // Keep a hint after answering so a byte-identical retry of the same query (a lost response)
  // can be answered again; a different query under a used index is refused (two answered
  // queries under one hint would reveal s1 - s2). Off by default; benchmarks turn it on to time
  // repeated answers.
  bool retain_hints_for_retries = false;
};

struct ZipPirAnswerTimings {
  double db_pass_ms = 0;    // D qu
  double hint_part_ms = 0;  // ck_o to RNS, P ck_o, CRT, packing, Paillier addition
  double offsets_to_rns_ms = 0;
  double rns_matvec_ms = 0;
  double crt_pack_add_ms = 0;
};

class ZipPirServer {
 public:
  // Preprocesses the database: H = D A, the rescaled exponents, P in RNS. `threads` for the
  // offline work.
  static Result<std::unique_ptr<ZipPirServer>> create(const ZipPirParams& params,
                                                      LweDatabase db, const Seed& a_seed,
                                                      unsigned threads,
                                                      ZipPirServerLimits limits = {});

  const ZipPirPublicInfo& info() const { return info_; }
  std::size_t packed_rows() const { return packed_rows_; }

  // Registers a client from its setup message; returns its id (first 8 bytes of SHA-256 of the
  // message, which the client computes too).
  Result<std::uint64_t> register_client(std::span<const std::uint8_t> setup_message);
  // Offline: compressed hints for query indices [first, first + count) of a client.
  Status precompute(std::uint64_t client_id, std::uint64_t first_index, std::size_t count,
                    unsigned threads);
  // Client-storage variant: hands over (and forgets) the hint of one query index.
  Result<std::vector<std::uint8_t>> export_hint(std::uint64_t client_id,
                                                std::uint64_t query_index);
  // Online: one query message in, one response message out.
  Result<std::vector<std::uint8_t>> answer(std::span<const std::uint8_t> query_message,
                                           ZipPirAnswerTimings* timings = nullptr);

  // Bytes of per-client state currently held (hints), and per precomputed query.
  std::size_t client_state_bytes(std::uint64_t client_id) const;
  std::size_t state_bytes_per_query() const;

 private:
  struct Client {
    PaillierPublicKey pk;
    std::vector<std::uint8_t> seed;
    std::shared_ptr<const RnsBasis> rns;
    std::map<std::uint64_t, std::vector<mpz_class>> hints;  // query index -> k_i
    std::map<std::uint64_t, bool> exported;                 // indices whose hint the client holds
    std::map<std::uint64_t, std::array<std::uint8_t, 32>> answered;  // retained: query digest
  };
  ZipPirServer() = default;

  ZipPirPublicInfo info_;
  std::optional<LweDatabase> db_;
  ZipPirServerLimits limits_;
  std::size_t slots_ = 0;
  std::size_t packed_rows_ = 0;
  std::vector<std::uint32_t> exponents_;  // rows x n
  std::vector<std::uint32_t> p_rns_;      // [prime][packed row][n]
  std::vector<std::uint32_t> primes_;
  mutable std::mutex mu_;
  std::map<std::uint64_t, Client> clients_;
};

// A query the client has sent and must remember until the answer arrives. Holds the secret s.
class ZipPirPendingQuery {
 public:
  ZipPirPendingQuery(ZipPirPendingQuery&&) noexcept = default;
  ZipPirPendingQuery& operator=(ZipPirPendingQuery&&) noexcept = default;
  std::uint64_t query_index() const { return query_index_; }
  std::size_t record() const { return record_; }

 private:
  friend class ZipPirClient;
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
  std::uint64_t client_id() const;
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

 private:
  ZipPirClient(ZipPirPublicInfo info, PaillierKeyPair keys)
      : info_(std::move(info)), keys_(std::make_unique<PaillierKeyPair>(std::move(keys))) {}
  ZipPirPublicInfo info_;
  std::unique_ptr<PaillierKeyPair> keys_;
  std::vector<std::uint8_t> seed_;
  std::uint64_t next_index_ = 0;
  std::map<std::uint64_t, std::vector<mpz_class>> offsets_;  // index -> r (secret)
  std::map<std::uint64_t, std::vector<mpz_class>> hints_;    // client-storage variant
  ZipPirClientTimings timings_;
};

}  // namespace privsearch::pir
