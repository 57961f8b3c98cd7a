#include "browser_client.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "ckks/param_sets.h"
#include "core/bytes.h"
#include "core/elapsed.h"
#include "index/artifacts/artifact_names.h"
#include "version/index_version.h"

namespace privsearch::web {
namespace {

using Clock = std::chrono::steady_clock;

// At most this many searches prepared and not finished (a page that drops its responses must
// not grow the heap without bound).
constexpr std::size_t kMaxPending = 16;

}  // namespace

Result<std::unique_ptr<BrowserClient>> BrowserClient::open(const std::string& dir) {
  version::OpenSpec spec;
  spec.role = version::Role::kClient;
  spec.candidates = version::CandidateIndex::kFlat;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto version, version::IndexVersion::open(dir, spec));
  std::unique_ptr<BrowserClient> c(new BrowserClient());
  c->version_id_ = version.version_id();
  c->documents_ = version.manifest().documents;
  PRIVSEARCH_ASSIGN_OR_RETURN(c->projection_, version.projection());
  PRIVSEARCH_ASSIGN_OR_RETURN(auto flat, version.flat_codes());
  c->codebook_ = flat.codebook;
  c->deleted_ = version.deleted();
  std::uint32_t first = 0;
  c->blocked_.reserve(flat.generations.size());  // segments point into it: no reallocation
  for (const auto& pq : flat.generations) {
    c->blocked_.push_back(index::block_codes(pq.codes.data(), pq.count, pq.codebook.m));
    c->segments_.push_back({c->blocked_.back().data(), pq.count, nullptr, first});
    first += static_cast<std::uint32_t>(pq.count);
  }
  if (!version.holds(index::kEncoderArtifact)) {
    return failed_precondition_error(
        "this index has no built-in text encoder (built from external vectors): the page "
        "searches text only");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(c->encoder_, version.encoder());
  if (auto shape = index::payload_shape(version.manifest()); shape.ok()) {
    c->payload_shape_ = *shape;
    if (version.holds(index::kPayloadDigestsArtifact)) {  // every fetched record is checked
      PRIVSEARCH_ASSIGN_OR_RETURN(auto digests, version.payload_digests(shape->record_bytes));
      c->payload_digests_ = std::make_shared<const index::RecordDigests>(std::move(digests));
    }
  }
  if (version.holds(index::kPayloadsArtifact)) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto payloads, version.payloads());
    c->payloads_.emplace(std::move(payloads));
  }
  if (version.holds(index::kDocIdsArtifact)) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto ids, version.doc_ids());
    c->doc_ids_.emplace(std::move(ids));
  }
  return c;
}

Status BrowserClient::agree(const std::string& params_name, const std::string& params_id,
                            bool floods) {
  const auto owner = owner_.hold();
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto lit, ckks::preset_literal(params_name));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto params, ckks::Params::create(lit));
  if (to_byte_string(params.id()) != params_id) {
    return failed_precondition_error("the provider's CKKS parameters differ from preset " +
                                     params_name);
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(
      auto crypto, client::RerankCrypto::create(params, projection_.output_dim, Prng::create()));
  crypto_.emplace(std::move(crypto));
  floods_ = floods;
  pending_.clear();
  return Status();
}

Result<client::KeySet> BrowserClient::key_set(std::size_t k) {
  const auto owner = owner_.hold();
  if (!crypto_) return failed_precondition_error("agree with the provider's parameters first");
  return crypto_->make_key_set(k, floods_);
}

std::vector<float> BrowserClient::project_text(const std::string& text) const {
  return projection_.project_query(encoder_->encode_query(text));
}

Result<PreparedSearch> BrowserClient::prepare(const std::string& text, std::size_t k) {
  const auto owner = owner_.hold();
  if (!crypto_) return failed_precondition_error("agree with the provider's parameters first");
  k = std::min(k, documents_);
  if (k == 0) return invalid_argument_error("candidates (K) must be at least 1");
  if (pending_.size() >= kMaxPending) pending_.erase(pending_.begin());  // the oldest
  PreparedSearch out;
  auto t0 = Clock::now();
  const auto scan_query = project_text(text);
  PRIVSEARCH_ASSIGN_OR_RETURN(
      const auto unit,
      client::core::unit_query(std::span<const float>(scan_query), client::core::QueryKind::kText));
  out.encode_ms = ms_since(t0);
  t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(auto found,
                              index::scan_top_k(codebook_, segments_, scan_query, k, 1, deleted_));
  out.scan_ms = ms_since(t0);
  // The order sent: a uniformly random permutation (CSPRNG), as the native client's default.
  auto order = client::core::SendOrder::make(found, &prng_);
  t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(auto encrypted, crypto_->encrypt_query(unit, found.size()));
  out.encrypt_ms = ms_since(t0);
  out.id = next_id_++;
  out.candidates = order.sent();
  out.query = std::move(encrypted.query);
  pending_.emplace(out.id,
                   Pending{std::move(encrypted.layout), std::move(found), std::move(order)});
  return out;
}

Result<FinishedSearch> BrowserClient::finish(std::uint32_t id, const std::string& payload,
                                             std::size_t top) {
  const auto owner = owner_.hold();
  const auto it = pending_.find(id);
  if (it == pending_.end()) {
    return failed_precondition_error(fmt::format("no prepared search {} (finished already?)", id));
  }
  const Pending pending = std::move(it->second);
  pending_.erase(it);
  FinishedSearch out;
  const auto t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto scores,
                              crypto_->decrypt_scores(pending.layout, byte_view(payload)));
  out.decrypt_ms = ms_since(t0);
  // Back in PQ order, then the one ranking (ties in PQ order): the native client's top 10.
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto by_pq, pending.order.restore(scores));
  for (const std::size_t i : client::core::rank_by_score(by_pq, top)) {
    out.hits.push_back(hit(pending.candidates[i], by_pq[i]));
  }
  return out;
}

Hit BrowserClient::hit(std::uint64_t doc, double score) const {
  return client::core::make_hit(doc, score, doc_ids_ ? &*doc_ids_ : nullptr,
                                payloads_ ? &*payloads_ : nullptr);
}

}  // namespace privsearch::web
