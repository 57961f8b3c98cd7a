#include <algorithm>
#include <exception>
#include <utility>

#include "ckks/compact.h"
#include "ckks/rerandomize.h"
#include "ckks/serialization.h"
#include "core/bytes.h"
#include "protocol/provider_core.h"
#include "protocol/provider_flooding.h"
#include "protocol/refusal.h"
#include "rerank/flooding.h"
#include "rerank/kernels.h"
#include "rerank/messages.h"
#include "rerank/packed_response.h"

// ProviderCore::rerank: the envelope and the query checked before any work, the exact rows of
// the candidates gathered, the kernel run under the key set, every output flooded and compacted.
namespace privsearch::protocol {

namespace detail {

Result<ckks::FloodingPlan> flooding_plan(const ProviderConfig& config,
                                         const rerank::KernelLayout& layout, std::size_t level,
                                         double scale, double message_coeff_bound) {
  if (layout.kernel() == rerank::Kernel::kPacked) {
    return rerank::plan_packed_flooding(config.params, layout, config.flood_security_bits,
                                        config.score_bound, config.score_bound);
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const double bound,
                              rerank::fast_kernel_noise_l2_log2(layout, config.params));
  return ckks::plan_flooding(config.params, level, scale, config.score_bound,
                             config.flood_security_bits, bound, message_coeff_bound);
}

}  // namespace detail

namespace {

v1::RerankResponse rerank_error(v1::ErrorCode code, std::string message) {
  return refusal_response<v1::RerankResponse>(code, std::move(message));
}

// Per output ciphertext: (2 / n) * sum of ||x_c|| over its candidates, a bound on the message's
// coefficients in units of the scale (|score_c| <= ||x_c|| for the client's unit query).
std::vector<double> message_coeff_bounds(const rerank::KernelLayout& layout,
                                         std::span<const float> rows, std::size_t n) {
  std::vector<double> out(layout.outputs(), 0.0);
  for (std::size_t c = 0; c < layout.k(); ++c) {
    double sq = 0;
    for (std::size_t j = 0; j < layout.dim(); ++j) {
      const double v = rows[c * layout.dim() + j];
      sq += v * v;
    }
    out[layout.slot_map()[c].ciphertext] += 2.0 * std::sqrt(sq) / static_cast<double>(n);
  }
  return out;
}

// Re-randomizes one output ciphertext in place (ckks/rerandomize.h) and returns the compaction
// options that fit it: the flood's coefficients (8 sigma) must fit next to the scores after
// compaction's scale-up, and compaction need not be more precise than the flood leaves.
Result<ckks::CompactOptions> flood_output(const ProviderConfig& config,
                                          const rerank::KernelLayout& layout,
                                          const ckks::PublicKey& pk, double message_coeff_bound,
                                          ckks::Ciphertext& ct) {
  PRIVSEARCH_ASSIGN_OR_RETURN(
      const auto plan,
      detail::flooding_plan(config, layout, ct.level(), ct.scale(), message_coeff_bound));
  thread_local Prng prng = Prng::create();
  PRIVSEARCH_ASSIGN_OR_RETURN(ct, ckks::rerandomize(config.params, ct, pk, plan, prng));
  ckks::CompactOptions options;
  options.value_bound = config.score_bound + 8.0 * std::exp2(plan.sigma_log2) / ct.scale();
  options.precision_bits =
      std::min(config.response_precision_bits,
               plan.precision_bits + 2.0 + std::log2(options.value_bound / config.score_bound));
  return options;
}

// What can be refused before decoding anything: size, artifact version, K, key id length.
std::optional<v1::Error> check_envelope(const ProviderConfig& config,
                                        const v1::RerankRequest& request) {
  const auto& limits = config.limits;
  if (auto e = check_size_and_version(request.ByteSizeLong(), request.artifact_version(),
                                      limits.max_message_bytes, config.artifact_version)) {
    return e;
  }
  const auto k = static_cast<std::size_t>(request.candidate_ids_size());
  if (k > limits.max_candidates) {
    return make_error(v1::TOO_MANY_CANDIDATES, std::to_string(k) + " candidates; the limit is " +
                                                   std::to_string(limits.max_candidates));
  }
  if (k == 0) return make_error(v1::MALFORMED_REQUEST, "no candidate IDs");
  if (request.key_id().size() != 32) {
    return make_error(v1::MALFORMED_REQUEST, "key id must be 32 bytes");
  }
  return std::nullopt;
}

// The query payload decoded and checked against this provider (params, kernel, K, d', layout).
std::optional<v1::Error> accept_query(const ProviderConfig& config, std::size_t dim,
                                      const v1::RerankRequest& request, rerank::RerankRequest& rr,
                                      rerank::AcceptedRequest& out) {
  rerank::MessageLimits ml;
  ml.max_candidates = config.limits.max_candidates;
  auto decoded = rerank::deserialize_request(byte_view(request.query()), ml);
  if (!decoded.ok()) {
    return make_error(v1::MALFORMED_REQUEST, "query: " + decoded.status().to_string());
  }
  rr = std::move(decoded).value();
  if (rr.params_id != config.params.id()) {
    return make_error(v1::PARAMS_MISMATCH,
                      "query encrypted under other CKKS parameters than " + config.params_name);
  }
  if (std::find(config.kernels.begin(), config.kernels.end(), rr.kernel) == config.kernels.end()) {
    return make_error(v1::MALFORMED_REQUEST, "kernel not offered by this provider");
  }
  if (rr.k != static_cast<std::size_t>(request.candidate_ids_size())) {
    return make_error(v1::MALFORMED_REQUEST, "the query's K differs from the candidate count");
  }
  if (rr.dim != dim) {
    return make_error(v1::MALFORMED_REQUEST, "query dimension " + std::to_string(rr.dim) +
                                                 "; the provider's is " + std::to_string(dim));
  }
  auto accepted = rerank::accept_request(config.params, rr, ml);
  if (!accepted.ok()) return make_error(v1::MALFORMED_REQUEST, accepted.status().to_string());
  out = std::move(accepted).value();
  return std::nullopt;
}

// The kernel's output ciphertexts, flooded when the provider re-randomizes, serialized (compact
// for the fast kernel). Failures here are provider bugs (INTERNAL).
Result<std::vector<std::vector<std::uint8_t>>> encode_outputs(
    const ProviderConfig& config, const rerank::KernelLayout& layout, const EvaluationKeys& keys,
    std::span<const float> rows, std::vector<ckks::Ciphertext>& outputs) {
  const bool compact = layout.kernel() == rerank::Kernel::kFast;
  const bool packed = layout.kernel() == rerank::Kernel::kPacked;
  const auto coeff_bounds = config.flood_security_bits > 0
                                ? message_coeff_bounds(layout, rows, config.params.n())
                                : std::vector<double>();
  std::vector<std::vector<std::uint8_t>> out;
  for (std::size_t w = 0; w < outputs.size(); ++w) {
    auto& ct = outputs[w];
    ckks::CompactOptions options{config.score_bound, config.response_precision_bits};
    if (config.flood_security_bits > 0) {
      PRIVSEARCH_ASSIGN_OR_RETURN(
          options, flood_output(config, layout, *keys.public_key, coeff_bounds.at(w), ct));
    }
    if (packed) {
      const auto positions = rerank::packed_positions(layout, w);
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto pc,
                                  rerank::compact_packed(config.params, ct, positions, options));
      out.push_back(rerank::serialize_packed(pc));
    } else if (compact) {
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto cc, ckks::compact(config.params, ct, options));
      out.push_back(ckks::serialize_compact(cc));
    } else {
      PRIVSEARCH_ASSIGN_OR_RETURN(
          auto b, ckks::serialize_ciphertext(config.params, ct, ckks::CiphertextForm::kFull));
      out.push_back(std::move(b));
    }
  }
  return out;
}

bool has_duplicates(std::vector<std::uint64_t> ids) {
  std::sort(ids.begin(), ids.end());
  return std::adjacent_find(ids.begin(), ids.end()) != ids.end();
}

v1::RerankResponse rerank_error(v1::Error error) {
  return refusal_response<v1::RerankResponse>(std::move(error));
}

}  // namespace

v1::RerankResponse ProviderCore::rerank(const v1::RerankRequest& request,
                                        const Caller& caller) try {
  const auto t0 = std::chrono::steady_clock::now();
  if (auto e = check_envelope(config_, request)) return rerank_error(std::move(*e));
  const std::vector<std::uint64_t> ids(request.candidate_ids().begin(),
                                       request.candidate_ids().end());
  if (has_duplicates(ids)) {
    // A candidate named twice would be scored twice: refused (it buys a client repeated noisy
    // reads of one row within one request).
    return rerank_error(v1::MALFORMED_REQUEST, "a candidate ID appears twice");
  }
  rerank::RerankRequest rr;
  rerank::AcceptedRequest accepted;
  if (auto e = accept_query(config_, store_->cols(), request, rr, accepted)) {
    return rerank_error(std::move(*e));
  }
  KeyId id{};
  std::copy(request.key_id().begin(), request.key_id().end(), id.begin());
  v1::Error no_keys;
  const auto keys = find_keys(id, &no_keys);
  if (!keys) return rerank_error(std::move(no_keys));
  const EvaluationKeys& uploaded = *keys;
  if (config_.flood_security_bits > 0 && !uploaded.public_key) {
    return rerank_error(v1::PUBLIC_KEY_REQUIRED,
                        "this provider re-randomizes its responses: upload the key set again "
                        "with a public key");
  }
  std::vector<float> rows;
  if (const Status s = store_->gather(ids, rows); !s.ok()) {
    // Out of range: the client's mistake. Data loss: the file under the provider changed since
    // it was verified; refuse rather than score against rows nobody verified.
    return rerank_error(s.code() == StatusCode::kDataLoss ? v1::DATA_LOSS : v1::UNKNOWN_CANDIDATE,
                        s.message());
  }
  // Charged last before the kernel: a request refused above costs its client no scores.
  std::uint64_t remaining = 0;
  if (auto e = charge_scores(id, caller, ids.size(), &remaining)) {
    return rerank_error(std::move(*e));
  }
  const auto& layout = accepted.layout;
  auto result =
      rerank::evaluate_kernel(layout, encoder_, evaluator_, uploaded.galois, accepted.query, rows,
                              config_.kernel_threads, config_.score_bound);
  if (!result.ok()) {
    return rerank_error(
        result.status().code() == StatusCode::kNotFound ? v1::MISSING_ROTATION_KEY : v1::INTERNAL,
        result.status().message());
  }
  auto outputs = encode_outputs(config_, layout, uploaded, rows, result.value().outputs);
  if (!outputs.ok()) return rerank_error(v1::INTERNAL, outputs.status().to_string());
  // accept_request re-derived `layout` from the request's header: the response's header is its.
  const auto out = rerank::response_for_layout(config_.params, layout, std::move(outputs).value());
  v1::RerankResponse response;
  response.set_payload(to_byte_string(rerank::serialize_response(out)));
  response.set_scores_remaining(remaining);
  response.set_provider_ms(
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  return response;
} catch (const std::exception& e) {
  return rerank_error(v1::INTERNAL, std::string("rerank failed: ") + e.what());
}

}  // namespace privsearch::protocol
