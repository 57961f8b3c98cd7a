// The provider's request handling without sockets: protobuf messages in, protobuf messages out
// (DESIGN.md section 2, layer L4). The gRPC service in src/server forwards to it unchanged, so
// every refusal below is testable without a network.
//
// Rerank (search paper, section 3.1, provider side): check the artifact version and the
// candidate count, charge the key id's budget, decode and accept the PSRR request (params id,
// kernel, d', K, query level), gather the K exact rows from the read-only store, evaluate the
// kernel with the cached rotation keys, and answer with the slot map and the output ciphertexts
// (compact for the fast kernel). Each refusal is an Error with its ErrorCode (see
// privsearch.proto); the core never throws and never stops serving.
// Score bound: compact responses need |score| <= bound. Clients send a unit-norm query, so the
// bound is the largest row norm of the store (computed at create() unless configured).
// Flooding (optional, config.flood_security_bits): each output ciphertext gets a fresh
// encryption of zero under the client's uploaded public key with noise sized by the kernel's
// noise bound (rerank/flooding.h) before compaction; create() refuses a security level the
// params cannot afford (kOutOfRange naming the largest that fits).
// Thread safety: server_info/upload_keys/rerank may run concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ckks/encoder.h"
#include "ckks/evaluator.h"
#include "ckks/params.h"
#include "core/status.h"
#include "index/artifacts/exact_rows.h"
#include "index/artifacts/exact_store.h"
#include "index/candidates/ivf.h"
#include "protocol/key_cache.h"
#include "protocol/privsearch.pb.h"
#include "protocol/provider_state.h"
#include "rerank/layout.h"
#include "scoring/layout.h"

namespace privsearch::protocol {

inline constexpr std::uint32_t kProtocolVersion = 1;

struct ProviderLimits {
  std::uint64_t max_message_bytes = 8u << 20;  // a K = 1024 request is ~0.1 MB; keys ~4 MB
  std::uint32_t max_candidates = 1024;
  std::uint32_t max_key_sets = 64;
  std::uint32_t max_concurrent_requests = 0;  // 0: 8 x the worker threads (set by the server)
  // Exact scores one key epoch may get, K per rerank (the score oracle, docs/SECURITY.md: with
  // basis-vector queries each score is one coordinate of a row, whatever K is). 512 requests of
  // K = 100; clients renew their key epoch when a request no longer fits.
  std::uint64_t scores_per_key_id = 512 * 100;
  std::uint32_t max_rotation_keys = 256;
  // Memory of cached key sets, uploads in progress included (~23 MB per K = 100 set under
  // rerank-n8192: KeyCache::cached_bytes).
  std::uint64_t key_cache_bytes = std::uint64_t{512} << 20;
  // A key set is forgotten this long after its upload (locally and in a shared store); the
  // client then uploads a new one (a new key epoch, UNKNOWN_KEY_ID). Bounds what a shared store
  // holds: uploads per minute x this x ~3.7 MB per set.
  std::int64_t key_set_ttl_s = 86400;
  // A key id's budget is remembered this long after its last request (longer than any key
  // epoch is cached: forgetting it then is no different from minting a new key set).
  std::int64_t key_budget_ttl_s = 7 * 86400;
  // Authenticated identities (protocol/identities.h): exact scores per identity per window,
  // across all its key epochs; 0: no identity budget. Window 0: the budget never refills.
  // Without it one identity renews its key epoch at the upload rate (10 at once, 30 a minute)
  // and gets K scores per epoch request each time: ~1.5 M scores a minute at K = 1024. 2^20 a
  // day is 1,024 searches of K = 1024 or 10,485 of K = 100.
  std::uint64_t scores_per_identity = std::uint64_t{1} << 20;
  std::int64_t identity_budget_window_s = 86400;
  RateLimit key_uploads{30, 10};  // per identity (or peer address) per minute, and burst
  // Encrypted cluster queries per PrivateScore request (each costs one pass over the matrix
  // shared with the others of its request).
  std::uint32_t max_private_queries = 8;
  // Access-private cluster queries per caller (identity, else peer address) per window: each
  // reads up to 3 columns of R documents (docs/SECURITY.md), so this bounds how fast the
  // scoring matrix can be read. 4,096 an hour = 512 searches at m = 8. 0: unmetered.
  std::uint64_t private_queries_per_window = 4096;
  std::int64_t private_query_window_s = 3600;
  // IVF lists per FetchLists request (a probe of nprobe lists is one or a few requests; the
  // response must also fit max_message_bytes).
  std::uint32_t max_lists_per_fetch = 64;
};

struct ProviderConfig {
  explicit ProviderConfig(ckks::Params p)
      : params(std::move(p)), kernels{rerank::kernel_for_params(params)} {}
  ckks::Params params;
  std::string params_name;
  std::string artifact_version;
  std::vector<rerank::Kernel> kernels;  // the preset's kernel (rerank::kernel_for_params)
  ProviderLimits limits;
  double score_bound = 0;               // 0: largest row norm of the store
  double response_precision_bits = 18;  // compact-response precision
  // Threads one rerank's fast kernel spreads its independent steps over (rerank/kernels.h):
  // 2 takes ~40% off an idle provider's latency; under full load the work is the same.
  std::size_t kernel_threads = 1;
  // > 0: re-randomize every response by noise flooding at this statistical security
  // (ckks/rerandomize.h; fast kernel only; clients must upload a public key).
  int flood_security_bits = 0;
  bool store_read_only = true;
  // The access-private scoring matrix (scoring/layout.h) of this index version; null: the index
  // has none and PrivateScore answers PRIVATE_SCORING_UNAVAILABLE.
  std::shared_ptr<const scoring::ScoringMatrix> scoring_matrix;
  // The IVF index's list segments (index/candidates/ivf.h) of this version; null: FetchLists
  // answers IVF_UNAVAILABLE.
  std::shared_ptr<const index::IvfListStore> ivf_lists;
};

class PrivateScoreHandler;
class ListFetchHandler;

class ProviderCore {
 public:
  // `rows`: the exact rows of every generation of the index version served
  // (index/artifacts/exact_rows.h). `state` (keys, budgets, rate limits) is shared with the cores
  // of later index versions; null: a fresh in-memory state sized by config.limits. kInvalidArgument
  // when the rows' d' does not fit the params.
  static Result<std::unique_ptr<ProviderCore>> create(
      ProviderConfig config, std::shared_ptr<const index::ExactRows> rows,
      std::shared_ptr<ProviderState> state = nullptr);
  // One exact store (no update generations), which must outlive the core.
  static Result<std::unique_ptr<ProviderCore>> create(
      ProviderConfig config, const index::ExactStore* store,
      std::shared_ptr<ProviderState> state = nullptr);
  // A state sized by `limits` around `ledger` (null: budgets in memory, what create() makes
  // when given no state).
  static std::shared_ptr<ProviderState> make_state(const ProviderLimits& limits,
                                                   std::shared_ptr<BudgetLedger> ledger = nullptr);

  v1::ServerInfo server_info() const;
  v1::UploadKeysResponse upload_keys(const v1::UploadKeysRequest& request,
                                     const Caller& caller = {});
  v1::RerankResponse rerank(const v1::RerankRequest& request, const Caller& caller = {});
  // Handed to this version's PrivateScoreHandler (private_score_handler.h): checks (version, m,
  // exact size), charges m queries to the caller's window account (identity, else address),
  // multiplies the scoring matrix by the m queries in one pass.
  v1::PrivateScoreResponse private_score(const v1::PrivateScoreRequest& request,
                                         const Caller& caller = {});

  // Handed to this version's ListFetchHandler (list_fetch_handler.h): the public list segments
  // a client probes (version, count, range, repeats, response size checked; each segment
  // verified against its hash before it is sent).
  v1::FetchListsResponse fetch_lists(const v1::FetchListsRequest& request) const;
  ~ProviderCore();
  const ProviderConfig& config() const { return config_; }
  std::size_t cached_key_sets() const { return state_->keys.size(); }
  const ProviderState& state() const { return *state_; }

 private:
  ProviderCore(ProviderConfig config, std::shared_ptr<const index::ExactRows> rows,
               ckks::Encoder encoder, std::shared_ptr<ProviderState> state);
  struct DecodedKeys {
    KeyId id;
    std::shared_ptr<const EvaluationKeys> keys;
  };
  // Decodes and checks an upload (params id, size reserved in the key cache, rotation keys,
  // public key when flooding) and caches it until `expires_s`; nullopt with `refusal` set.
  std::optional<DecodedKeys> decode_keys(const v1::UploadKeysRequest& upload,
                                         std::int64_t expires_s, v1::Error* refusal);
  // The key set of `id`: the local cache, else the shared store (checked like an upload, then
  // cached). Null with `refusal` set when there is none or it cannot be used.
  std::shared_ptr<const EvaluationKeys> find_keys(const KeyId& id, v1::Error* refusal);
  // The budget accounts a request of `caller` under key `id` charges.
  std::vector<BudgetAccount> accounts_for(const KeyId& id, const Caller& caller) const;
  // The identity's window account (none for anonymous callers or without an identity budget).
  std::optional<BudgetAccount> identity_account(const Caller& caller,
                                                const std::string& group) const;
  // Charges `scores` exact scores to the key id and the identity; the refusal (budget
  // exhausted, quota exhausted, ledger unavailable) or nullopt with `remaining` set.
  std::optional<v1::Error> charge_scores(const KeyId& id, const Caller& caller,
                                         std::uint64_t scores, std::uint64_t* remaining);

  ProviderConfig config_;
  std::shared_ptr<const index::ExactRows> store_;
  ckks::Encoder encoder_;
  ckks::Evaluator evaluator_;
  std::shared_ptr<ProviderState> state_;
  // The other requests a version answers, over the same config and state.
  std::unique_ptr<PrivateScoreHandler> private_scores_;
  std::unique_ptr<ListFetchHandler> lists_;
};

// Builds an Error message.
v1::Error make_error(v1::ErrorCode code, std::string message);

}  // namespace privsearch::protocol
