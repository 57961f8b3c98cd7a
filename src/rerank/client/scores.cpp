#include "rerank/client/scores.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <memory>

#include "ckks/client/compact_decryptor.h"
#include "ckks/client/decryptor.h"
#include "ckks/client/encryptor.h"
#include "core/secure_buffer.h"

namespace privsearch::rerank {

namespace {
// Encoder::create computes the DFT roots (sin/cos of n/2 angles): about 0.1 ms, a third of a
// response's decryption. Clients call these helpers per request, so each thread keeps the
// encoders of the parameter sets it has used (public data; a handful of presets at most).
Result<const ckks::Encoder*> cached_encoder(const ckks::Params& params) {
  thread_local std::map<ckks::ParamsId, std::unique_ptr<ckks::Encoder>> cache;
  auto& slot = cache[params.id()];
  if (!slot) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto e, ckks::Encoder::create(params));
    slot = std::make_unique<ckks::Encoder>(std::move(e));
  }
  return slot.get();
}
}  // namespace

Result<ckks::Ciphertext> encrypt_query(const KernelLayout& layout, const ckks::Params& params,
                                       const ckks::SecretKey& sk, std::span<const double> z,
                                       Prng& prng) {
  if (z.size() != layout.dim()) {
    return invalid_argument_error(
        fmt::format("query has {} values, the layout expects d' = {}", z.size(), layout.dim()));
  }
  for (std::size_t j = 0; j < z.size(); ++j) {
    if (!std::isfinite(z[j])) {
      return invalid_argument_error(fmt::format("query value {} is not finite", j));
    }
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const ckks::Encoder* encoder, cached_encoder(params));
  const auto slots = layout.replicate_query(z);
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto pt,
                              encoder->encode(slots, params.max_level(), params.default_scale()));
  return ckks::Encryptor(params).encrypt_symmetric(sk, pt, prng);
}

Result<ckks::GaloisKeys> make_rotation_keys(const KernelLayout& layout,
                                            const ckks::KeyGenerator& keygen,
                                            const ckks::SecretKey& sk, Prng& prng) {
  return keygen.create_galois_keys(sk, layout.rotation_steps(), false, prng);
}

namespace {
Result<std::vector<double>> gather(const KernelLayout& layout,
                                   const std::vector<std::vector<double>>& decoded) {
  std::vector<double> scores(layout.k());
  for (std::size_t c = 0; c < layout.k(); ++c) {
    const SlotRef& ref = layout.slot_map()[c];
    if (ref.ciphertext >= decoded.size() || ref.slot >= decoded[ref.ciphertext].size()) {
      return invalid_argument_error(fmt::format("candidate {}'s slot is outside the outputs", c));
    }
    scores[c] = decoded[ref.ciphertext][ref.slot];
  }
  return scores;
}
Status check_count(const KernelLayout& layout, std::size_t count) {
  if (layout.kernel() == Kernel::kPacked) {
    return invalid_argument_error(
        "a packed layout's scores are coefficients: decrypt them with decrypt_packed_scores");
  }
  if (count != layout.outputs()) {
    return invalid_argument_error(
        fmt::format("{} response ciphertexts, the layout has {}", count, layout.outputs()));
  }
  return Status();
}
// Every decoded slot (scores and the zeros around them), wiped on every way out once the scores
// are gathered (or decoding failed part way).
struct DecodedSlots {
  std::vector<std::vector<double>> values;
  DecodedSlots() = default;
  DecodedSlots(const DecodedSlots&) = delete;
  DecodedSlots& operator=(const DecodedSlots&) = delete;
  ~DecodedSlots() {
    for (auto& v : values) secure_zero(v.data(), v.size() * sizeof(double));
  }
};
}  // namespace

Result<std::vector<double>> decrypt_scores(const KernelLayout& layout, const ckks::Params& params,
                                           const ckks::SecretKey& sk,
                                           std::span<const ckks::Ciphertext> outputs) {
  PRIVSEARCH_RETURN_IF_ERROR(check_count(layout, outputs.size()));
  PRIVSEARCH_ASSIGN_OR_RETURN(const ckks::Encoder* encoder, cached_encoder(params));
  const ckks::Decryptor decryptor(params);
  DecodedSlots decoded;
  for (const auto& ct : outputs) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto pt, decryptor.decrypt(sk, ct));
    auto values = encoder->decode(pt);
    const auto poly = pt.mutable_poly().data();  // the decrypted message: wiped
    secure_zero(poly.data(), poly.size_bytes());
    PRIVSEARCH_RETURN_IF_ERROR(values.status());
    decoded.values.push_back(std::move(values).value());
  }
  return gather(layout, decoded.values);
}

Result<std::vector<double>> decrypt_compact_scores(
    const KernelLayout& layout, const ckks::Params& params, const ckks::SecretKey& sk,
    std::span<const ckks::CompactCiphertext> outputs) {
  PRIVSEARCH_RETURN_IF_ERROR(check_count(layout, outputs.size()));
  PRIVSEARCH_ASSIGN_OR_RETURN(const ckks::Encoder* encoder, cached_encoder(params));
  const ckks::CompactDecryptor decryptor(params);
  DecodedSlots decoded;
  for (const auto& ct : outputs) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto values, decryptor.decrypt_decode(sk, *encoder, ct));
    decoded.values.push_back(std::move(values));
  }
  return gather(layout, decoded.values);
}

}  // namespace privsearch::rerank
