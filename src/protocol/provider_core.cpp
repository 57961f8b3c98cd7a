#include "protocol/provider_core.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <utility>

#include "ckks/compact.h"
#include "ckks/galois_keys.h"
#include "ckks/serialization.h"
#include "core/sha256.h"
#include "rerank/kernels.h"
#include "rerank/messages.h"

namespace privsearch::protocol {
namespace {

double max_row_norm(const index::ExactStore& store) {
  double best = 0;
  for (std::size_t r = 0; r < store.rows(); ++r) {
    const float* x = store.row(r);
    double s = 0;
    for (std::size_t j = 0; j < store.cols(); ++j) s += static_cast<double>(x[j]) * x[j];
    best = std::max(best, s);
  }
  return std::sqrt(best);
}

std::string to_bytes(std::span<const std::uint8_t> b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

std::span<const std::uint8_t> as_span(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

v1::RerankResponse rerank_error(v1::ErrorCode code, std::string message) {
  v1::RerankResponse r;
  *r.mutable_error() = make_error(code, std::move(message));
  return r;
}

v1::UploadKeysResponse upload_error(v1::ErrorCode code, std::string message) {
  v1::UploadKeysResponse r;
  *r.mutable_error() = make_error(code, std::move(message));
  return r;
}

}  // namespace

v1::Error make_error(v1::ErrorCode code, std::string message) {
  v1::Error e;
  e.set_code(code);
  e.set_message(std::move(message));
  return e;
}

Result<std::unique_ptr<ProviderCore>> ProviderCore::create(ProviderConfig config,
                                                           const index::ExactStore* store) {
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
  if (config.score_bound <= 0) config.score_bound = std::max(1e-3, max_row_norm(*store));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto encoder, ckks::Encoder::create(config.params));
  return std::unique_ptr<ProviderCore>(new ProviderCore(std::move(config), store,
                                                        std::move(encoder)));
}

ProviderCore::ProviderCore(ProviderConfig config, const index::ExactStore* store,
                           ckks::Encoder encoder)
    : config_(std::move(config)),
      store_(store),
      encoder_(std::move(encoder)),
      evaluator_(config_.params),
      keys_(config_.limits.max_key_sets, config_.limits.requests_per_key_id) {}

v1::ServerInfo ProviderCore::server_info() const {
  v1::ServerInfo info;
  info.set_protocol_version(kProtocolVersion);
  info.set_params_id(to_bytes(config_.params.id()));
  info.set_params_name(config_.params_name);
  info.set_artifact_version(config_.artifact_version);
  for (const auto k : config_.kernels) info.add_kernels(std::string(rerank::kernel_name(k)));
  auto* l = info.mutable_limits();
  l->set_max_message_bytes(config_.limits.max_message_bytes);
  l->set_max_candidates(config_.limits.max_candidates);
  l->set_max_key_sets(config_.limits.max_key_sets);
  l->set_max_concurrent_requests(config_.limits.max_concurrent_requests);
  l->set_requests_per_key_id(config_.limits.requests_per_key_id);
  l->set_max_rotation_keys(config_.limits.max_rotation_keys);
  auto* a = info.mutable_attestation();
  // This translation unit belongs to the provider library, which links no secret-key code
  // (tests/provider_only checks the symbols of the provider binary).
  a->set_secret_key_code_linked(false);
  a->set_store_read_only(config_.store_read_only && store_->read_only());
  a->set_process_id(static_cast<std::uint32_t>(::getpid()));
  a->set_library_role("provider");
  info.set_dim(static_cast<std::uint32_t>(store_->cols()));
  info.set_documents(store_->rows());
  return info;
}

v1::UploadKeysResponse ProviderCore::upload_keys(const v1::UploadKeysRequest& request) try {
  if (request.ByteSizeLong() > config_.limits.max_message_bytes) {
    return upload_error(v1::MESSAGE_TOO_LARGE, "key set above the message-size limit");
  }
  if (request.params_id() != to_bytes(config_.params.id())) {
    return upload_error(v1::PARAMS_MISMATCH,
                        "keys made for other CKKS parameters than the provider's " +
                            config_.params_name);
  }
  auto keys = ckks::deserialize_galois_keys(config_.params, as_span(request.galois_keys()),
                                            config_.limits.max_rotation_keys);
  if (!keys.ok()) {
    return upload_error(v1::MALFORMED_REQUEST, "galois keys: " + keys.status().to_string());
  }
  const KeyId id = sha256(as_span(request.galois_keys()));
  const auto remaining = keys_.insert(
      id, std::make_shared<const ckks::GaloisKeys>(std::move(keys).value()));
  v1::UploadKeysResponse r;
  r.set_key_id(to_bytes(id));
  r.set_request_budget(remaining);
  return r;
} catch (const std::exception& e) {
  return upload_error(v1::INTERNAL, std::string("upload failed: ") + e.what());
}

v1::RerankResponse ProviderCore::rerank(const v1::RerankRequest& request) try {
  const auto t0 = std::chrono::steady_clock::now();
  const auto& limits = config_.limits;
  if (request.ByteSizeLong() > limits.max_message_bytes) {
    return rerank_error(v1::MESSAGE_TOO_LARGE, "request above the message-size limit");
  }
  if (request.artifact_version() != config_.artifact_version) {
    return rerank_error(v1::WRONG_ARTIFACT_VERSION,
                        "the provider serves artifact version " + config_.artifact_version +
                            "; fetch the current index");
  }
  const auto k = static_cast<std::size_t>(request.candidate_ids_size());
  if (k > limits.max_candidates) {
    return rerank_error(v1::TOO_MANY_CANDIDATES,
                        std::to_string(k) + " candidates; the limit is " +
                            std::to_string(limits.max_candidates));
  }
  if (k == 0) return rerank_error(v1::MALFORMED_REQUEST, "no candidate IDs");
  if (request.key_id().size() != 32) {
    return rerank_error(v1::MALFORMED_REQUEST, "key id must be 32 bytes");
  }

  rerank::MessageLimits ml;
  ml.max_candidates = limits.max_candidates;
  auto decoded = rerank::deserialize_request(as_span(request.query()), ml);
  if (!decoded.ok()) {
    return rerank_error(v1::MALFORMED_REQUEST, "query: " + decoded.status().to_string());
  }
  const auto& rr = decoded.value();
  if (rr.params_id != config_.params.id()) {
    return rerank_error(v1::PARAMS_MISMATCH, "query encrypted under other CKKS parameters than " +
                                                 config_.params_name);
  }
  if (std::find(config_.kernels.begin(), config_.kernels.end(), rr.kernel) ==
      config_.kernels.end()) {
    return rerank_error(v1::MALFORMED_REQUEST, "kernel not offered by this provider");
  }
  if (rr.k != k) {
    return rerank_error(v1::MALFORMED_REQUEST, "the query's K differs from the candidate count");
  }
  if (rr.dim != store_->cols()) {
    return rerank_error(v1::MALFORMED_REQUEST,
                        "query dimension " + std::to_string(rr.dim) + "; the provider's is " +
                            std::to_string(store_->cols()));
  }
  auto accepted = rerank::accept_request(config_.params, rr, ml);
  if (!accepted.ok()) {
    return rerank_error(v1::MALFORMED_REQUEST, accepted.status().to_string());
  }

  KeyId id{};
  std::copy(request.key_id().begin(), request.key_id().end(), id.begin());
  auto lease = keys_.acquire(id);
  if (!lease.ok()) {
    return rerank_error(lease.status().code() == StatusCode::kNotFound ? v1::UNKNOWN_KEY_ID
                                                                       : v1::BUDGET_EXHAUSTED,
                        lease.status().message());
  }

  std::vector<float> rows;
  const std::vector<std::uint64_t> ids(request.candidate_ids().begin(),
                                       request.candidate_ids().end());
  if (const Status s = store_->gather(ids, rows); !s.ok()) {
    return rerank_error(v1::UNKNOWN_CANDIDATE, s.message());
  }
  const auto& layout = accepted.value().layout;
  auto result = rerank::evaluate_kernel(layout, encoder_, evaluator_, *lease.value().keys,
                                        accepted.value().query, rows);
  if (!result.ok()) {
    return rerank_error(result.status().code() == StatusCode::kNotFound
                            ? v1::MISSING_ROTATION_KEY
                            : v1::INTERNAL,
                        result.status().message());
  }

  rerank::RerankResponse out;
  out.params_id = rr.params_id;
  out.kernel = rr.kernel;
  out.dim = rr.dim;
  out.period = rr.period;
  out.k = rr.k;
  out.slot_map = layout.slot_map;
  out.compact = rr.kernel == rerank::Kernel::kFast;
  for (const auto& ct : result.value().outputs) {
    if (out.compact) {
      auto cc = ckks::compact(config_.params, ct,
                              ckks::CompactOptions{config_.score_bound,
                                                   config_.response_precision_bits});
      if (!cc.ok()) return rerank_error(v1::INTERNAL, cc.status().to_string());
      out.outputs.push_back(ckks::serialize_compact(cc.value()));
    } else {
      auto b = ckks::serialize_ciphertext(config_.params, ct, ckks::CiphertextForm::kFull);
      if (!b.ok()) return rerank_error(v1::INTERNAL, b.status().to_string());
      out.outputs.push_back(std::move(b).value());
    }
  }
  v1::RerankResponse response;
  response.set_payload(to_bytes(rerank::serialize_response(out)));
  response.set_budget_remaining(lease.value().remaining);
  response.set_provider_ms(
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  return response;
} catch (const std::exception& e) {
  return rerank_error(v1::INTERNAL, std::string("rerank failed: ") + e.what());
}

}  // namespace privsearch::protocol
