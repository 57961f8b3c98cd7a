#include "protocol/provider_core.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <optional>
#include <utility>

#include "ckks/compact.h"
#include "ckks/galois_keys.h"
#include "ckks/rerandomize.h"
#include "ckks/serialization.h"
#include "core/bytes.h"
#include "core/linkage.h"
#include "core/sha256.h"
#include "protocol/list_fetch_handler.h"
#include "protocol/private_score_handler.h"
#include "protocol/provider_flooding.h"
#include "protocol/refusal.h"
#include "rerank/flooding.h"
#include "rerank/kernels.h"
#include "rerank/messages.h"
#include "rerank/packed.h"
#include "rerank/packed_response.h"

namespace privsearch::protocol {
namespace {

v1::UploadKeysResponse upload_error(v1::ErrorCode code, std::string message) {
  return refusal_response<v1::UploadKeysResponse>(code, std::move(message));
}

}  // namespace

v1::Error make_error(v1::ErrorCode code, std::string message) {
  v1::Error e;
  e.set_code(code);
  e.set_message(std::move(message));
  return e;
}

std::shared_ptr<ProviderState> ProviderCore::make_state(const ProviderLimits& limits,
                                                        std::shared_ptr<BudgetLedger> ledger) {
  if (!ledger) ledger = make_memory_ledger();
  return std::make_shared<ProviderState>(std::move(ledger), limits.max_key_sets,
                                         limits.key_cache_bytes, limits.key_uploads);
}

Result<std::unique_ptr<ProviderCore>> ProviderCore::create(ProviderConfig config,
                                                           const index::ExactStore* store,
                                                           std::shared_ptr<ProviderState> state) {
  if (store == nullptr) return Status(StatusCode::kInvalidArgument, "provider: no exact store");
  return create(std::move(config),
                std::make_shared<const index::ExactRows>(index::ExactRows::of(*store)),
                std::move(state));
}

namespace {
// The packed kernel's row scale and response widths follow from the score bound
// (rerank/packed.h, packed_response.h): refuse at start-up a bound below the store's rows, one
// that leaves no row scale, or a response precision the widths cannot reach, rather than on
// every request after its budget was charged.
Status check_packed_config(const ProviderConfig& config, double max_row_norm) {
  if (config.score_bound < max_row_norm) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("provider: score bound {} below the store's largest row norm {}",
                              config.score_bound, max_row_norm));
  }
  const auto rho = rerank::packed_row_log_scale(config.params, config.score_bound);
  if (!rho.ok()) return Status(rho.status().code(), "provider: " + rho.status().message());
  const double scale = std::ldexp(1.0, config.params.log_scale() + *rho);
  const auto bits = rerank::choose_packed_bits(
      config.params, scale, {config.score_bound, config.response_precision_bits});
  if (!bits.ok()) return Status(bits.status().code(), "provider: " + bits.status().message());
  return Status();
}

}  // namespace

Result<std::unique_ptr<ProviderCore>> ProviderCore::create(
    ProviderConfig config, std::shared_ptr<const index::ExactRows> store,
    std::shared_ptr<ProviderState> state) {
  if (store == nullptr || store->rows() == 0) {
    return Status(StatusCode::kInvalidArgument, "provider: no exact store");
  }
  if (store->cols() == 0 || store->cols() > config.params.slots()) {
    return Status(StatusCode::kInvalidArgument,
                  "provider: the store's dimension does not fit the CKKS slots");
  }
  if (config.kernels.empty()) {
    return Status(StatusCode::kInvalidArgument, "provider: no kernel offered");
  }
  if (config.score_bound <= 0) config.score_bound = std::max(1e-3, store->max_row_norm());
  if (rerank::kernel_for_params(config.params) == rerank::Kernel::kPacked) {
    PRIVSEARCH_RETURN_IF_ERROR(check_packed_config(config, store->max_row_norm()));
  }
  if (config.flood_security_bits != 0) {
    const auto kernel = rerank::kernel_for_params(config.params);
    if (config.kernels != std::vector<rerank::Kernel>{kernel}) {
      return Status(StatusCode::kInvalidArgument,
                    "provider: response flooding is implemented for the fast and packed kernels "
                    "only, each at its own preset");
    }
    // Worst case: the most candidates per ciphertext, the kernel's output at level 0 and the
    // preset's scale (the fast kernel's rescales keep it).
    PRIVSEARCH_ASSIGN_OR_RETURN(
        const auto layout,
        rerank::make_layout(config.params, kernel, store->cols(), config.limits.max_candidates));
    const auto plan = detail::flooding_plan(config, layout, 0, config.params.default_scale(), 0.0);
    if (!plan.ok()) {
      return Status(plan.status().code(), "provider: " + plan.status().message());
    }
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(auto encoder, ckks::Encoder::create(config.params));
  if (!state) state = make_state(config.limits);
  return std::unique_ptr<ProviderCore>(
      new ProviderCore(std::move(config), std::move(store), std::move(encoder), std::move(state)));
}

ProviderCore::ProviderCore(ProviderConfig config, std::shared_ptr<const index::ExactRows> store,
                           ckks::Encoder encoder, std::shared_ptr<ProviderState> state)
    : config_(std::move(config)),
      store_(std::move(store)),
      encoder_(std::move(encoder)),
      evaluator_(config_.params),
      state_(std::move(state)),
      private_scores_(std::make_unique<PrivateScoreHandler>(
          config_.limits, config_.artifact_version, config_.scoring_matrix, state_)),
      lists_(std::make_unique<ListFetchHandler>(config_.limits, config_.artifact_version,
                                                config_.ivf_lists)) {}

ProviderCore::~ProviderCore() = default;

v1::PrivateScoreResponse ProviderCore::private_score(const v1::PrivateScoreRequest& request,
                                                     const Caller& caller) {
  return private_scores_->answer(request, caller);
}

v1::FetchListsResponse ProviderCore::fetch_lists(const v1::FetchListsRequest& request) const {
  return lists_->answer(request);
}

std::vector<BudgetAccount> ProviderCore::accounts_for(const KeyId& id, const Caller& caller) const {
  const auto& l = config_.limits;
  const std::int64_t now = unix_now_s();
  // One group per request (a Redis Cluster slot): the identity's when there is one (with
  // tokens every caller has one), else the key id's.
  const std::string key_account = "key:" + to_hex(id);
  const std::string group = caller.identity.empty() ? key_account : "identity:" + caller.identity;
  std::vector<BudgetAccount> accounts;
  accounts.push_back(
      {key_account, l.scores_per_key_id, now + l.key_budget_ttl_s, group, BudgetKind::kKeyId});
  if (auto a = identity_account(caller, group)) accounts.push_back(std::move(*a));
  return accounts;
}

std::optional<BudgetAccount> ProviderCore::identity_account(const Caller& caller,
                                                            const std::string& group) const {
  const auto& l = config_.limits;
  if (caller.identity.empty() || l.scores_per_identity == 0) return std::nullopt;
  if (l.identity_budget_window_s > 0) {
    const std::int64_t window = unix_now_s() / l.identity_budget_window_s;
    return BudgetAccount{"identity:" + caller.identity + ":" + std::to_string(window),
                         l.scores_per_identity, (window + 1) * l.identity_budget_window_s, group,
                         BudgetKind::kIdentity};
  }
  return BudgetAccount{"identity:" + caller.identity, l.scores_per_identity,
                       std::numeric_limits<std::int64_t>::max(), group, BudgetKind::kIdentity};
}

std::optional<v1::Error> ProviderCore::charge_scores(const KeyId& id, const Caller& caller,
                                                     std::uint64_t scores,
                                                     std::uint64_t* remaining) {
  const auto accounts = accounts_for(id, caller);
  auto charged = state_->budgets->charge(accounts, scores);
  if (!charged.ok()) {
    // The ledger cannot record the charge: fail closed rather than serve unmetered.
    return make_error(v1::STATE_UNAVAILABLE,
                      "request budgets unavailable: " + charged.status().message());
  }
  if (!charged->charged()) {
    if (accounts[*charged->full].kind == BudgetKind::kIdentity) {
      return make_error(v1::QUOTA_EXHAUSTED,
                        "identity `" + caller.identity + "` has no room in its score budget for " +
                            std::to_string(scores) +
                            " more scores this window; a new key epoch does not renew it");
    }
    return make_error(v1::BUDGET_EXHAUSTED, "the score budget of this key id has no room for " +
                                                std::to_string(scores) +
                                                " more scores: start a new key epoch");
  }
  *remaining = *std::min_element(charged->remaining.begin(), charged->remaining.end());
  return std::nullopt;
}

v1::ServerInfo ProviderCore::server_info() const {
  v1::ServerInfo info;
  info.set_protocol_version(kProtocolVersion);
  info.set_params_id(to_byte_string(config_.params.id()));
  info.set_params_name(config_.params_name);
  info.set_artifact_version(config_.artifact_version);
  for (const auto k : config_.kernels) info.add_kernels(std::string(rerank::kernel_name(k)));
  auto* l = info.mutable_limits();
  l->set_max_message_bytes(config_.limits.max_message_bytes);
  l->set_max_candidates(config_.limits.max_candidates);
  l->set_max_private_queries(config_.limits.max_private_queries);
  l->set_max_lists_per_fetch(config_.limits.max_lists_per_fetch);
  l->set_fetch_mixed_generations(true);
  l->set_max_key_sets(config_.limits.max_key_sets);
  l->set_max_concurrent_requests(config_.limits.max_concurrent_requests);
  l->set_scores_per_key_id(config_.limits.scores_per_key_id);
  l->set_max_rotation_keys(config_.limits.max_rotation_keys);
  l->set_key_cache_bytes(config_.limits.key_cache_bytes);
  l->set_scores_per_identity(config_.limits.scores_per_identity);
  l->set_private_queries_per_window(config_.limits.private_queries_per_window);
  l->set_private_query_window_s(
      static_cast<std::uint64_t>(std::max<std::int64_t>(0, config_.limits.private_query_window_s)));
  l->set_identity_budget_window_s(
      static_cast<std::uint64_t>(config_.limits.identity_budget_window_s));
  l->set_key_uploads_per_minute(config_.limits.key_uploads.per_minute);
  l->set_key_set_ttl_s(static_cast<std::uint64_t>(config_.limits.key_set_ttl_s));
  info.set_budget_store(state_->budgets->where());
  auto* a = info.mutable_attestation();
  // Decided by the linker (core/linkage.h): false in privsearch-provider, true in a test or tool
  // that links a client into the same process.
  a->set_secret_key_code_linked(secret_key_code_linked());
  a->set_store_read_only(config_.store_read_only && store_->read_only());
  a->set_process_id(static_cast<std::uint32_t>(::getpid()));
  a->set_library_role("provider");
  info.set_dim(static_cast<std::uint32_t>(store_->cols()));
  info.set_flood_security_bits(static_cast<std::uint32_t>(config_.flood_security_bits));
  info.set_documents(store_->rows());
  if (config_.ivf_lists)
    info.set_ivf_lists(static_cast<std::uint32_t>(config_.ivf_lists->index().lists));
  return info;
}

std::optional<ProviderCore::DecodedKeys> ProviderCore::decode_keys(
    const v1::UploadKeysRequest& upload, std::int64_t expires_s, v1::Error* refusal) {
  auto refuse = [refusal](v1::ErrorCode code, std::string message) {
    *refusal = make_error(code, std::move(message));
    return std::nullopt;
  };
  if (upload.params_id() != to_byte_string(config_.params.id())) {
    return refuse(v1::PARAMS_MISMATCH,
                  "keys made for other CKKS parameters than the provider's " + config_.params_name);
  }
  // The memory an upload can decode to is reserved before decoding (the cache is bounded in
  // bytes, uploads in progress included).
  auto reservation = state_->keys.reserve(
      ckks::galois_keys_memory_bound(config_.params, upload.galois_keys().size()));
  if (!reservation.ok()) return refuse(v1::OVERLOADED, reservation.status().message());
  auto keys = ckks::deserialize_galois_keys(config_.params, byte_view(upload.galois_keys()),
                                            config_.limits.max_rotation_keys);
  if (!keys.ok()) {
    return refuse(v1::MALFORMED_REQUEST, "galois keys: " + keys.status().to_string());
  }
  if (keys->size() == 0) {
    // Useless for any layout; refused so it cannot serve as a free key epoch.
    return refuse(v1::MALFORMED_REQUEST, "a key set with no rotation keys");
  }
  auto decoded = std::make_shared<EvaluationKeys>();
  decoded->galois = std::move(keys).value();
  decoded->expires_s = expires_s;
  if (!upload.public_key().empty()) {
    auto pk = ckks::deserialize_public_key(config_.params, byte_view(upload.public_key()));
    if (!pk.ok()) return refuse(v1::MALFORMED_REQUEST, "public key: " + pk.status().to_string());
    decoded->public_key = std::move(pk).value();
  } else if (config_.flood_security_bits > 0) {
    return refuse(v1::PUBLIC_KEY_REQUIRED,
                  "this provider re-randomizes its responses (noise flooding at " +
                      std::to_string(config_.flood_security_bits) +
                      " bits): upload a public key with the rotation keys");
  }
  // The id covers both halves, so one set of rotation keys with two public keys is two ids.
  std::string material = upload.galois_keys();
  material += upload.public_key();
  const KeyId id = sha256(byte_view(material));
  const std::uint64_t bytes = decoded->galois.memory_bytes();
  state_->keys.insert(id, decoded, bytes, std::move(reservation).value());
  return DecodedKeys{id, std::move(decoded)};
}

std::shared_ptr<const EvaluationKeys> ProviderCore::find_keys(const KeyId& id, v1::Error* refusal) {
  const std::int64_t now = state_->key_clock_s();
  if (auto cached = state_->keys.find(id); cached.ok()) {
    if ((*cached)->expires_s == 0 || (*cached)->expires_s > now) return *cached;
  }
  if (!state_->shared_keys) {
    *refusal =
        make_error(v1::UNKNOWN_KEY_ID, "unknown or expired key id: upload the key set again");
    return nullptr;
  }
  // Uploaded through another replica (or evicted here): pull it once and check it exactly as
  // an upload. What the store holds is not trusted: a value that does not decode, was made for
  // other parameters or does not hash to the requested id is refused (the client re-uploads).
  auto stored = state_->shared_keys->get(id);
  if (!stored.ok()) {
    *refusal =
        make_error(v1::STATE_UNAVAILABLE, "the shared key store: " + stored.status().message());
    return nullptr;
  }
  if (!stored->has_value() || (*stored)->expires_s <= now) {
    *refusal =
        make_error(v1::UNKNOWN_KEY_ID, "unknown or expired key id: upload the key set again");
    return nullptr;
  }
  auto damaged = [&](const std::string& why) {
    *refusal =
        make_error(v1::UNKNOWN_KEY_ID, "the shared store's key set for this id is unusable (" +
                                           why + "): upload the key set again");
    return nullptr;
  };
  v1::UploadKeysRequest upload;
  if ((*stored)->upload.size() > config_.limits.max_message_bytes ||
      !upload.ParseFromString((*stored)->upload)) {
    return damaged("not a key-set upload");
  }
  v1::Error why;
  auto decoded = decode_keys(upload, (*stored)->expires_s, &why);
  if (!decoded) {
    if (why.code() == v1::OVERLOADED) {
      *refusal = why;
      return nullptr;
    }
    return damaged(why.message());
  }
  if (decoded->id != id) return damaged("it hashes to another key id");
  return decoded->keys;
}

v1::UploadKeysResponse ProviderCore::upload_keys(const v1::UploadKeysRequest& request,
                                                 const Caller& caller) try {
  if (request.ByteSizeLong() > config_.limits.max_message_bytes) {
    return upload_error(v1::MESSAGE_TOO_LARGE, "key set above the message-size limit");
  }
  // Each upload decodes megabytes and makes a new key epoch: rate-limited per client.
  if (const double wait_s = state_->key_uploads.take(caller.rate_key()); wait_s > 0) {
    return upload_error(v1::RATE_LIMITED,
                        fmt::format("key uploads are limited to {:g} per minute per client; retry "
                                    "in {:.1f} s",
                                    config_.limits.key_uploads.per_minute, wait_s));
  }
  v1::Error refused;
  auto decoded =
      decode_keys(request, state_->key_clock_s() + config_.limits.key_set_ttl_s, &refused);
  if (!decoded) return upload_error(refused.code(), refused.message());
  const KeyId id = decoded->id;
  if (state_->shared_keys) {
    // Shared before it is acknowledged: a client's next request may reach any replica.
    v1::UploadKeysRequest stored;
    stored.set_params_id(request.params_id());
    stored.set_galois_keys(request.galois_keys());
    stored.set_public_key(request.public_key());
    const Status s =
        state_->shared_keys->put(id, stored.SerializeAsString(), decoded->keys->expires_s);
    if (!s.ok()) {
      return upload_error(v1::STATE_UNAVAILABLE, "the shared key store: " + s.message());
    }
  }
  const auto accounts = accounts_for(id, caller);
  std::uint64_t remaining = std::numeric_limits<std::uint64_t>::max();
  for (const auto& a : accounts) {
    auto r = state_->budgets->remaining(a);
    if (!r.ok()) return upload_error(v1::STATE_UNAVAILABLE, r.status().message());
    remaining = std::min(remaining, *r);
  }
  v1::UploadKeysResponse r;
  r.set_key_id(to_byte_string(id));
  r.set_score_budget(remaining);
  return r;
} catch (const std::exception& e) {
  return upload_error(v1::INTERNAL, std::string("upload failed: ") + e.what());
}

}  // namespace privsearch::protocol
