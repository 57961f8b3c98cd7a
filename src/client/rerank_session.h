// The client side of one encrypted-rerank conversation, without any transport: the one place a
// rerank request is built and a rerank response is read (search paper, section 3.1, client
// side). Everything that talks to a provider — SearchClient over gRPC, the audits' raw request
// pools, the systems benchmark, the provider tests in-process and as a process — goes through it.
//
//   session = RerankSession::create(params, d')       a secret key (CSPRNG), never leaves here
//   up      = session.make_key_upload(K, with_pk)     a key epoch: fresh rotation keys for K
//   session.set_key_id(K, provider's key id)
//   pending = session.build_request({query, ids, artifact_version})
//   scores  = session.decode_response(pending, provider's response)
//
// A key epoch is one set of rotation keys (and so one key id at the provider, with its own
// score budget); `make_key_upload` for the same K starts a new one. The query must be a unit
// vector: the provider's compact response bound assumes every score lies in [-1, 1].
// Thread safety: every method holds the session's OwnerLock (core/owner_lock.h), so concurrent
// callers never share the CSPRNG or a key epoch mid-change; sessions are independent.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ckks/params.h"
#include "client/rerank_crypto.h"
#include "core/csprng.h"
#include "core/status.h"
#include "protocol/privsearch.pb.h"
#include "rerank/layout.h"

namespace privsearch::client {

// What a rerank request says: the unit query in the projected space (d' values), the candidate
// IDs in the order they are sent, and the artifact version of the client's index.
struct RerankQuery {
  std::span<const double> unit_query;
  std::span<const std::uint64_t> candidates;
  std::string_view artifact_version;
};

// A request ready to send, and the layout its response must answer (callers may alter the
// request, as the negative tests do; decode_response checks the answer against `layout`).
struct PendingRerank {
  v1::RerankRequest request;
  rerank::KernelLayout layout;
};

class RerankSession {
 public:
  // A session with a fresh secret key for `params` and queries of `dim` = d' values; `prng`
  // defaults to the OS-seeded CSPRNG (tests pass a seeded one for reproducible keys).
  // kInvalidArgument when no fast-kernel layout exists for dim (0 or above the slot count).
  static Result<RerankSession> create(const ckks::Params& params, std::size_t dim);
  static Result<RerankSession> create(const ckks::Params& params, std::size_t dim, Prng prng);
  ~RerankSession();
  RerankSession(RerankSession&&) noexcept;
  RerankSession& operator=(RerankSession&&) noexcept;
  RerankSession(const RerankSession&) = delete;
  RerankSession& operator=(const RerankSession&) = delete;

  const ckks::Params& params() const;
  std::size_t dim() const;

  // Starts a key epoch for K candidates: the fast kernel's rotation keys for (d', K), and the
  // public key (made once per secret key) when the provider re-randomizes responses. Forgets
  // the key id this session held for K.
  Result<v1::UploadKeysRequest> make_key_upload(std::size_t k, bool with_public_key);
  // The provider's key id for the current epoch of K (from its UploadKeysResponse).
  void set_key_id(std::size_t k, std::string key_id);
  // The key id of K's current epoch, or nullopt when none was uploaded yet.
  std::optional<std::string> key_id(std::size_t k) const;

  // Encrypts the query (seeded), lays out the fast kernel's request, names the candidates and
  // the key id of K's epoch. kInvalidArgument: no candidates, a query that is not finite or not
  // of unit norm; kFailedPrecondition: no key id set for this K.
  Result<PendingRerank> build_request(const RerankQuery& query);
  // build_request in two halves: the encryption of a unit query for K candidates (the same
  // checks of the query), then the request naming `candidates` (exactly K of them) and K's key
  // id (kFailedPrecondition when none is set). encrypt_query uses the session's randomness:
  // one call at a time per session, like every other method.
  Result<EncryptedQuery> encrypt_query(std::span<const double> unit_query, std::size_t k);
  Result<PendingRerank> complete_request(EncryptedQuery encrypted,
                                         std::span<const std::uint64_t> candidates,
                                         std::string_view artifact_version) const;

  // The scores of the request's candidates, in the order they were sent. A provider refusal
  // becomes kResourceExhausted (BUDGET_EXHAUSTED) or kFailedPrecondition naming the code; a
  // payload that does not decode or does not answer the pending layout becomes kDataLoss or
  // kInvalidArgument from the decoders.
  Result<std::vector<double>> decode_response(const PendingRerank& pending,
                                              const v1::RerankResponse& response) const;

  struct State;

 private:
  explicit RerankSession(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// "provider refused ...: CODE: message" as a Status, by the one refusal table
// (client/core/refusal.h), for callers that read a v1::Error themselves.
Status provider_refusal(std::string_view what, const v1::Error& error);

}  // namespace privsearch::client
