// ZipPIR server side (provider): preprocessing, offline hints, online answers. Links only the
// Paillier public-key code. See zippir_common.h for the protocol.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "pir/paillier/paillier.h"
#include "pir/zippir/rns.h"
#include "pir/zippir/zippir_common.h"
#include "pir/zippir/zippir_shard.h"

namespace privsearch::pir {

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
  static Result<std::unique_ptr<ZipPirServer>> create(const ZipPirParams& params, LweDatabase db,
                                                      const Seed& a_seed, unsigned threads,
                                                      ZipPirServerLimits limits = {});

  // One row shard of the database (pir/zippir/zippir_shard.h): rows `range` of `db` only, with
  // the whole database's public info (clients query a shard exactly as they query one server).
  // Its answers are part messages for the packed rows it holds; assemble_zippir_response() joins
  // the parts of all shards into the bytes one server would send. `range` from plan_row_shards.
  static Result<std::unique_ptr<ZipPirServer>> create_shard(const ZipPirParams& params,
                                                            const LweDatabase& db,
                                                            ZipPirRowRange range,
                                                            const Seed& a_seed, unsigned threads,
                                                            ZipPirServerLimits limits = {});

  // The server of an updated database (records appended, some changed or zeroed) without
  // recomputing H = D A from scratch: H is linear in D, so with C the columns where the new
  // database differs from `previous`'s, H' = H + D'[:, C] A[C, :] - D[:, C] A[C, :] (mod 2^32),
  // rows x |C| x n products instead of rows x columns x n. `db` keeps the previous shape's rows
  // and records per column (grown_database_shape()); the rest (rescaled exponents, P in RNS) is
  // derived from H' as create() derives it, so the result is the server create(params, db,
  // a_seed) makes, byte for byte. No registrations carry over. Not for shards.
  // `changed_columns`: |C|, when given.
  static Result<std::unique_ptr<ZipPirServer>> update(const ZipPirServer& previous, LweDatabase db,
                                                      unsigned threads,
                                                      ZipPirServerLimits limits = {},
                                                      std::size_t* changed_columns = nullptr);

  const ZipPirPublicInfo& info() const { return info_; }
  // The packed rows this server answers for (all of them unless it is a shard).
  std::size_t packed_rows() const { return packed_rows_; }
  std::size_t first_packed_row() const { return first_packed_; }
  // Bytes of the database this server holds (rows x columns; a shard's rows only).
  std::size_t db_bytes() const { return local_rows_ * info_.shape.columns; }
  bool is_shard() const { return packed_rows_ != info_.params.packed_rows(info_.shape); }

  // Registers a client from its setup message; returns its id (first 8 bytes of SHA-256 of the
  // message, which the client computes too).
  Result<std::uint64_t> register_client(std::span<const std::uint8_t> setup_message);
  // Forgets a client and its precomputed hints (expired or evicted); false when unknown. Its
  // query indices are never answered again under this registration.
  bool unregister_client(std::uint64_t client_id);
  // Offline: compressed hints for query indices [first, first + count) of a client.
  // `cancel` set meanwhile (the service stopping): kUnavailable, nothing stored.
  Status precompute(std::uint64_t client_id, std::uint64_t first_index, std::size_t count,
                    unsigned threads, const std::atomic<bool>* cancel = nullptr);
  // Client-storage variant: hands over (and forgets) the hint of one query index.
  Result<std::vector<std::uint8_t>> export_hint(std::uint64_t client_id, std::uint64_t query_index);
  // Online: one query message in, one response message out.
  Result<std::vector<std::uint8_t>> answer(std::span<const std::uint8_t> query_message,
                                           ZipPirAnswerTimings* timings = nullptr);

  // For replicas that keep hints in a shared store (protocol/pir_shared_state.h) rather than in
  // this server: the hint of one query index computed and serialized (the export_hint format)
  // without being kept, and an answer under a hint the caller took from the store (checked:
  // format, parameters, query index, ciphertexts below N^2). The caller guarantees each index's
  // hint is answered at most once, cluster-wide.
  Result<std::vector<std::uint8_t>> compute_hint(std::uint64_t client_id, std::uint64_t query_index,
                                                 unsigned threads,
                                                 const std::atomic<bool>* cancel = nullptr);
  Result<std::vector<std::uint8_t>> answer_with_hint(std::span<const std::uint8_t> query_message,
                                                     std::span<const std::uint8_t> hint_message,
                                                     ZipPirAnswerTimings* timings = nullptr);
  // Checks a whole query message as answer() would before using a hint (kNotFound: unknown
  // client), so a shared hint is taken only for a query that can be answered.
  Status check_query(std::span<const std::uint8_t> query_message) const {
    return parse_query(query_message).status();
  }
  // The client id and query index a query message names (framing and size checked).
  Result<std::pair<std::uint64_t, std::uint64_t>> query_ids(
      std::span<const std::uint8_t> query_message) const;

  // Bytes of per-client state currently held (hints), and per precomputed query.
  std::size_t client_state_bytes(std::uint64_t client_id) const;
  // Query indices with a precomputed hint, ascending (empty for an unknown client).
  std::vector<std::uint64_t> ready_indices(std::uint64_t client_id) const;
  bool has_client(std::uint64_t client_id) const;
  std::vector<std::uint64_t> client_ids() const;
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
  // A query message parsed and checked, before its one-time hint is consumed.
  struct ParsedQuery {
    std::uint64_t client_id = 0, index = 0;
    std::shared_ptr<const RnsBasis> rns;
    std::optional<PaillierPublicKey> pk;
    std::vector<std::uint32_t> ck_words;  // the offsets ck_o, rns->input_words() words each
    std::vector<std::uint32_t> qu;        // the LWE query, shape.stride entries
  };
  // The client's hint for a query index (used once), or t_only for an exported hint.
  struct TakenHint {
    std::vector<mpz_class> k;
    bool t_only = false;
  };
  // What a client's hint work reads, copied under the lock (the work itself runs outside it).
  struct HintInputs {
    PaillierPublicKey pk;
    std::vector<std::uint8_t> seed;
  };
  ZipPirServer() = default;
  // kNotFound for an unknown client; kResourceExhausted when `more` hints would pass the
  // per-client cap.
  Result<HintInputs> hint_inputs(std::uint64_t client_id, std::size_t more) const;
  // The compressed hint k of query `q` over this server's rows; kUnavailable when cancelled.
  Result<std::vector<mpz_class>> hint_for(const HintInputs& in, std::uint64_t q, unsigned threads,
                                          const std::atomic<bool>* cancel) const;
  static Result<std::unique_ptr<ZipPirServer>> create_rows(const ZipPirParams& params,
                                                           const DatabaseShape& shape,
                                                           ZipPirRowRange range,
                                                           std::vector<std::uint8_t> rows,
                                                           const Seed& a_seed, unsigned threads,
                                                           ZipPirServerLimits limits);
  // create_rows() after H (range.rows x hint_ld(n)) is known.
  static Result<std::unique_ptr<ZipPirServer>> from_hint(
      const ZipPirParams& params, const DatabaseShape& shape, ZipPirRowRange range,
      std::vector<std::uint8_t> rows, std::vector<std::uint32_t> hint, const Seed& a_seed,
      unsigned threads, ZipPirServerLimits limits);
  Result<ParsedQuery> parse_query(std::span<const std::uint8_t> message) const;
  Result<TakenHint> take_hint(const ParsedQuery& q, std::span<const std::uint8_t> message);
  Result<std::vector<std::uint8_t>> answer_parsed(const ParsedQuery& q, const TakenHint& hint,
                                                  ZipPirAnswerTimings* timings) const;

  ZipPirPublicInfo info_;
  std::vector<std::uint8_t> rows_;   // the database rows this server holds (local_rows_ x stride)
  std::vector<std::uint32_t> hint_;  // H of those rows (local_rows_ x hint_ld(n)), for update()
  std::size_t local_rows_ = 0, first_packed_ = 0;
  ZipPirServerLimits limits_;
  std::size_t slots_ = 0;
  std::size_t packed_rows_ = 0;
  std::vector<std::uint32_t> exponents_;  // rows x n
  std::vector<std::uint32_t> p_rns_;      // [prime][packed row][n]
  std::vector<std::uint32_t> primes_;
  mutable std::mutex mu_;
  std::map<std::uint64_t, Client> clients_;
};

}  // namespace privsearch::pir
