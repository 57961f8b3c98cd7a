#include "client/rerank_crypto.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

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
// Layouts kept for distinct K (a caller cycling through K values must not grow memory).
constexpr std::size_t kMaxCachedLayouts = 16;

struct RerankCrypto::State {
  ckks::Params params;
  std::size_t dim;
  Prng prng;
  ckks::KeyGenerator keygen;
  ckks::SecretKey secret_key;
  std::string public_key_bytes;  // made on first need, once per secret key
  // K -> its layout, made once (its Galois elements cost as much as a tenth of an encryption).
  mutable std::map<std::size_t, rerank::KernelLayout> layouts;
  OwnerLock owner;  // every method that touches the key, the CSPRNG or the layouts holds it

  State(const ckks::Params& p, std::size_t d, Prng rng)
      : params(p),
        dim(d),
        prng(std::move(rng)),
        keygen(p),
        secret_key(keygen.create_secret_key(prng)) {}
};

Result<RerankCrypto> RerankCrypto::create(const ckks::Params& params, std::size_t dim, Prng prng) {
  if (dim == 0 || dim > params.slots()) {
    return invalid_argument_error(fmt::format(
        "query dimension {} outside [1, {}] for these parameters", dim, params.slots()));
  }
  return RerankCrypto(std::make_unique<State>(params, dim, std::move(prng)));
}

RerankCrypto::RerankCrypto(std::unique_ptr<State> state) : state_(std::move(state)) {}
RerankCrypto::~RerankCrypto() = default;
RerankCrypto::RerankCrypto(RerankCrypto&&) noexcept = default;
RerankCrypto& RerankCrypto::operator=(RerankCrypto&&) noexcept = default;

const ckks::Params& RerankCrypto::params() const { return state_->params; }
std::size_t RerankCrypto::dim() const { return state_->dim; }

Result<rerank::KernelLayout> RerankCrypto::layout_for(std::size_t k) const {
  return rerank::make_layout(state_->params, rerank::kernel_for_params(state_->params), state_->dim,
                             k);
}

Result<KeySet> RerankCrypto::make_key_set(std::size_t k, bool with_public_key) {
  const auto owner = state_->owner.hold();
  auto& s = *state_;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto layout, layout_for(k));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto keys,
                              rerank::make_rotation_keys(layout, s.keygen, s.secret_key, s.prng));
  KeySet out;
  out.params_id = to_byte_string(s.params.id());
  out.galois_keys = to_byte_string(ckks::serialize_galois_keys(s.params, keys));
  if (with_public_key) {
    if (s.public_key_bytes.empty()) {
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto pk, s.keygen.create_public_key(s.secret_key, s.prng));
      s.public_key_bytes = to_byte_string(ckks::serialize_public_key(s.params, pk));
    }
    out.public_key = s.public_key_bytes;
  }
  return out;
}

Result<EncryptedQuery> RerankCrypto::encrypt_query(std::span<const double> unit_query,
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
  PRIVSEARCH_ASSIGN_OR_RETURN(out.layout, layout_for(k));
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

Result<std::vector<double>> RerankCrypto::decrypt_scores(
    const rerank::KernelLayout& layout, std::span<const std::uint8_t> payload) const {
  const auto owner = state_->owner.hold();
  const auto& s = *state_;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto answer, rerank::deserialize_response(payload));
  PRIVSEARCH_RETURN_IF_ERROR(rerank::check_response(s.params, layout, answer));
  if (layout.kernel() == rerank::Kernel::kPacked) {
    std::vector<rerank::PackedCiphertext> packed;
    for (std::size_t w = 0; w < answer.outputs.size(); ++w) {
      PRIVSEARCH_ASSIGN_OR_RETURN(
          auto c, rerank::deserialize_packed(s.params, answer.outputs[w],
                                             rerank::packed_positions(layout, w).size()));
      packed.push_back(std::move(c));
    }
    return rerank::decrypt_packed_scores(layout, s.params, s.secret_key, packed);
  }
  std::vector<ckks::CompactCiphertext> cts;
  cts.reserve(answer.outputs.size());
  for (const auto& b : answer.outputs) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto c, ckks::deserialize_compact(s.params, b));
    cts.push_back(std::move(c));
  }
  return rerank::decrypt_compact_scores(layout, s.params, s.secret_key, cts);
}

}  // namespace privsearch::client
