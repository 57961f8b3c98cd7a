#include "client/rerank_session.h"

#include <fmt/format.h>

#include <optional>

#include "client/core/refusal.h"
#include "core/bytes.h"
#include "core/owner_lock.h"

namespace privsearch::client {

struct RerankSession::State {
  RerankCrypto crypto;
  std::map<std::size_t, std::string> key_ids;  // K -> key id of K's current epoch
  OwnerLock owner;  // every method that touches the key ids (or the crypto mid-change) holds it

  explicit State(RerankCrypto c) : crypto(std::move(c)) {}
};

Result<RerankSession> RerankSession::create(const ckks::Params& params, std::size_t dim) {
  return create(params, dim, Prng::create());
}

Result<RerankSession> RerankSession::create(const ckks::Params& params, std::size_t dim,
                                            Prng prng) {
  PRIVSEARCH_ASSIGN_OR_RETURN(auto crypto, RerankCrypto::create(params, dim, std::move(prng)));
  return RerankSession(std::make_unique<State>(std::move(crypto)));
}

RerankSession::RerankSession(std::unique_ptr<State> state) : state_(std::move(state)) {}
RerankSession::~RerankSession() = default;
RerankSession::RerankSession(RerankSession&&) noexcept = default;
RerankSession& RerankSession::operator=(RerankSession&&) noexcept = default;

const ckks::Params& RerankSession::params() const { return state_->crypto.params(); }
std::size_t RerankSession::dim() const { return state_->crypto.dim(); }

Result<v1::UploadKeysRequest> RerankSession::make_key_upload(std::size_t k, bool with_public_key) {
  const auto owner = state_->owner.hold();
  PRIVSEARCH_ASSIGN_OR_RETURN(auto keys, state_->crypto.make_key_set(k, with_public_key));
  v1::UploadKeysRequest req;
  req.set_params_id(std::move(keys.params_id));
  req.set_galois_keys(std::move(keys.galois_keys));
  if (with_public_key) req.set_public_key(std::move(keys.public_key));
  state_->key_ids.erase(k);
  return req;
}

void RerankSession::set_key_id(std::size_t k, std::string key_id) {
  const auto owner = state_->owner.hold();
  state_->key_ids[k] = std::move(key_id);
}

std::optional<std::string> RerankSession::key_id(std::size_t k) const {
  const auto owner = state_->owner.hold();
  const auto it = state_->key_ids.find(k);
  if (it == state_->key_ids.end()) return std::nullopt;
  return it->second;  // a copy: set_key_id may replace it once the lock is released
}

Result<PendingRerank> RerankSession::build_request(const RerankQuery& query) {
  const auto owner = state_->owner.hold();
  if (query.candidates.empty()) return invalid_argument_error("no candidate IDs");
  if (!key_id(query.candidates.size())) {
    return Status(StatusCode::kFailedPrecondition,
                  fmt::format("no key set uploaded for K = {}: make_key_upload first",
                              query.candidates.size()));
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(auto encrypted,
                              encrypt_query(query.unit_query, query.candidates.size()));
  return complete_request(std::move(encrypted), query.candidates, query.artifact_version);
}

Result<EncryptedQuery> RerankSession::encrypt_query(std::span<const double> unit_query,
                                                    std::size_t k) {
  const auto owner = state_->owner.hold();
  return state_->crypto.encrypt_query(unit_query, k);
}

Result<PendingRerank> RerankSession::complete_request(EncryptedQuery encrypted,
                                                      std::span<const std::uint64_t> candidates,
                                                      std::string_view artifact_version) const {
  const auto owner = state_->owner.hold();
  if (candidates.size() != encrypted.k) {
    return invalid_argument_error(fmt::format("{} candidate IDs for a query encrypted for K = {}",
                                              candidates.size(), encrypted.k));
  }
  const auto key = key_id(encrypted.k);
  if (!key) {
    return Status(
        StatusCode::kFailedPrecondition,
        fmt::format("no key set uploaded for K = {}: make_key_upload first", encrypted.k));
  }
  PendingRerank out;
  out.layout = std::move(encrypted.layout);
  out.request.set_key_id(*key);
  out.request.set_artifact_version(std::string(artifact_version));
  for (const auto id : candidates) out.request.add_candidate_ids(id);
  out.request.set_query(std::move(encrypted.query));
  return out;
}

Result<std::vector<double>> RerankSession::decode_response(
    const PendingRerank& pending, const v1::RerankResponse& response) const {
  const auto owner = state_->owner.hold();
  if (response.has_error()) return provider_refusal("the request", response.error());
  return state_->crypto.decrypt_scores(pending.layout, byte_view(response.payload()));
}

Status provider_refusal(std::string_view what, const v1::Error& error) {
  return core::refusal_status(what, error.code(), error.message());
}

}  // namespace privsearch::client
