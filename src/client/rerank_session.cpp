#include "client/rerank_session.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "ckks/client/keygen.h"
#include "ckks/compact.h"
#include "ckks/serialization.h"
#include "core/bytes.h"
#include "core/owner_lock.h"
#include "rerank/client/packed_scores.h"
#include "rerank/client/scores.h"
#include "rerank/messages.h"

namespace privsearch::client {

// |z|^2 may differ from 1 by rounding only: a query normalized in double precision is within a
// few ulps; anything further is a caller that forgot to normalize (scores would leave [-1, 1]).
constexpr double kUnitNormTolerance = 1e-9;

struct RerankSession::State {
  ckks::Params params;
  std::size_t dim;
  Prng prng;
  ckks::KeyGenerator keygen;
  ckks::SecretKey secret_key;
  std::string public_key_bytes;                // made on first need, once per secret key
  std::map<std::size_t, std::string> key_ids;  // K -> key id of K's current epoch
  OwnerLock owner;  // every method that touches the key, the CSPRNG or the epochs holds it

  State(const ckks::Params& p, std::size_t d, Prng rng)
      : params(p),
        dim(d),
        prng(std::move(rng)),
        keygen(p),
        secret_key(keygen.create_secret_key(prng)) {}

  Result<rerank::KernelLayout> layout_for(std::size_t k) const {
    return rerank::make_layout(params, rerank::kernel_for_params(params), dim, k);
  }
};

Result<RerankSession> RerankSession::create(const ckks::Params& params, std::size_t dim) {
  return create(params, dim, Prng::create());
}

Result<RerankSession> RerankSession::create(const ckks::Params& params, std::size_t dim,
                                            Prng prng) {
  if (dim == 0 || dim > params.slots()) {
    return invalid_argument_error(fmt::format(
        "query dimension {} outside [1, {}] for these parameters", dim, params.slots()));
  }
  return RerankSession(std::make_unique<State>(params, dim, std::move(prng)));
}

RerankSession::RerankSession(std::unique_ptr<State> state) : state_(std::move(state)) {}
RerankSession::~RerankSession() = default;
RerankSession::RerankSession(RerankSession&&) noexcept = default;
RerankSession& RerankSession::operator=(RerankSession&&) noexcept = default;

const ckks::Params& RerankSession::params() const { return state_->params; }
std::size_t RerankSession::dim() const { return state_->dim; }

Result<v1::UploadKeysRequest> RerankSession::make_key_upload(std::size_t k, bool with_public_key) {
  const auto owner = state_->owner.hold();
  auto& s = *state_;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto layout, s.layout_for(k));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto keys,
                              rerank::make_rotation_keys(layout, s.keygen, s.secret_key, s.prng));
  v1::UploadKeysRequest req;
  req.set_params_id(to_byte_string(s.params.id()));
  req.set_galois_keys(to_byte_string(ckks::serialize_galois_keys(s.params, keys)));
  if (with_public_key) {
    if (s.public_key_bytes.empty()) {
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto pk, s.keygen.create_public_key(s.secret_key, s.prng));
      s.public_key_bytes = to_byte_string(ckks::serialize_public_key(s.params, pk));
    }
    req.set_public_key(s.public_key_bytes);
  }
  s.key_ids.erase(k);
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
  auto& s = *state_;
  if (k == 0) return invalid_argument_error("no candidate IDs");
  if (unit_query.size() != s.dim) {
    return invalid_argument_error(
        fmt::format("query of dimension {}; this session's d' is {}", unit_query.size(), s.dim));
  }
  double norm2 = 0;
  for (const double v : unit_query) norm2 += v * v;
  if (!std::isfinite(norm2) || std::abs(norm2 - 1.0) > kUnitNormTolerance) {
    return invalid_argument_error(
        fmt::format("the query must have unit norm (|z|^2 = {:.12g})", norm2));
  }
  EncryptedQuery out;
  out.k = k;
  PRIVSEARCH_ASSIGN_OR_RETURN(out.layout, s.layout_for(k));
  PRIVSEARCH_ASSIGN_OR_RETURN(
      const auto ct,
      out.layout.kernel() == rerank::Kernel::kPacked
          ? rerank::encrypt_packed_query(out.layout, s.params, s.secret_key, unit_query, s.prng)
          : rerank::encrypt_query(out.layout, s.params, s.secret_key, unit_query, s.prng));
  PRIVSEARCH_ASSIGN_OR_RETURN(
      auto ct_bytes, ckks::serialize_ciphertext(s.params, ct, ckks::CiphertextForm::kSeeded));
  const auto message = rerank::request_for_layout(s.params, out.layout, std::move(ct_bytes));
  out.query = to_byte_string(rerank::serialize_request(message));
  return out;
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
  const auto& s = *state_;
  if (response.has_error()) return provider_refusal("the request", response.error());
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto answer,
                              rerank::deserialize_response(byte_view(response.payload())));
  PRIVSEARCH_RETURN_IF_ERROR(rerank::check_response(s.params, pending.layout, answer));
  if (pending.layout.kernel() == rerank::Kernel::kPacked) {
    std::vector<rerank::PackedCiphertext> packed;
    for (std::size_t w = 0; w < answer.outputs.size(); ++w) {
      PRIVSEARCH_ASSIGN_OR_RETURN(
          auto c, rerank::deserialize_packed(s.params, answer.outputs[w],
                                             rerank::packed_positions(pending.layout, w).size()));
      packed.push_back(std::move(c));
    }
    return rerank::decrypt_packed_scores(pending.layout, s.params, s.secret_key, packed);
  }
  std::vector<ckks::CompactCiphertext> cts;
  cts.reserve(answer.outputs.size());
  for (const auto& b : answer.outputs) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto c, ckks::deserialize_compact(s.params, b));
    cts.push_back(std::move(c));
  }
  return rerank::decrypt_compact_scores(pending.layout, s.params, s.secret_key, cts);
}

Status provider_refusal(std::string_view what, const v1::Error& error) {
  StatusCode code = StatusCode::kFailedPrecondition;
  switch (error.code()) {
    case v1::BUDGET_EXHAUSTED:
    case v1::QUOTA_EXHAUSTED:
    case v1::RATE_LIMITED:
    case v1::OVERLOADED:
      code = StatusCode::kResourceExhausted;
      break;
    case v1::STATE_UNAVAILABLE:
    case v1::PIR_SHARD_UNAVAILABLE:
      code = StatusCode::kUnavailable;
      break;
    // The provider's files changed under it since it verified them: not the request's fault.
    case v1::DATA_LOSS:
      code = StatusCode::kDataLoss;
      break;
    case v1::UNAUTHENTICATED:
      code = StatusCode::kInvalidArgument;
      break;
    default:
      break;
  }
  return Status(code, fmt::format("provider refused {}: {}: {}", what,
                                  v1::ErrorCode_Name(error.code()), error.message()));
}

}  // namespace privsearch::client
