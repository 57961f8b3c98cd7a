#include "client/search_client.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <future>
#include <numeric>
#include <optional>

#include "ckks/param_sets.h"
#include "client/rerank_session.h"
#include "client/search_client_impl.h"
#include "core/bytes.h"
#include "core/csprng.h"
#include "core/elapsed.h"
#include "core/owner_lock.h"
#include "index/artifacts/artifact_names.h"
#include "index/artifacts/artifacts.h"
#include "index/artifacts/atomic_file.h"
#include "index/artifacts/manifest.h"
#include "index/artifacts/payload_store.h"
#include "index/artifacts/tombstones.h"
#include "index/candidates/ivf.h"
#include "index/candidates/pq_scan.h"
#include "index/encoders/text_encoder.h"
#include "index/encoders/word_vectors.h"
#include "scoring/client/private_query.h"

namespace privsearch::client {

SearchClient::SearchClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SearchClient::~SearchClient() = default;

Result<std::unique_ptr<SearchClient>> SearchClient::open(const std::filesystem::path& index_dir,
                                                         std::unique_ptr<ProviderClient> transport,
                                                         const IndexTrust& trust) {
  OpenOptions options;
  options.trust = trust;
  return open(index_dir, std::move(transport), options);
}

namespace {

// The public artifacts of `version` loaded into `impl`: the projection, the candidate index
// (flat codes in the scan's block layout, or the IVF directory), and the optional encoder,
// payloads and access-private scorer the directory holds.
Status load_artifacts(const version::IndexVersion& version, SearchClient::Impl& impl) {
  impl.deleted = version.deleted();
  PRIVSEARCH_ASSIGN_OR_RETURN(impl.projection, version.projection());
  if (version.candidates() == CandidateIndex::kIvf) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto ivf, version.ivf());
    impl.ivf = std::make_unique<index::IvfIndex>(std::move(ivf.ivf));
  } else {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto flat, version.flat_codes());
    impl.flat_codebook = flat.codebook;
    std::uint32_t first = 0;
    for (const auto& pq : flat.generations) {
      impl.flat_blocked.push_back(index::block_codes(pq.codes.data(), pq.count, pq.codebook.m));
      impl.flat_segments.push_back({impl.flat_blocked.back().data(), pq.count, nullptr, first});
      first += static_cast<std::uint32_t>(pq.count);
    }
  }
  if (version.holds(index::kEncoderArtifact)) {
    PRIVSEARCH_ASSIGN_OR_RETURN(impl.encoder, version.encoder());
  }
  if (version.holds(index::kPayloadsArtifact)) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto payloads, version.payloads());
    impl.payloads.emplace(std::move(payloads));
  }
  if (version.holds(index::kDocIdsArtifact)) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto ids, version.doc_ids());
    impl.doc_ids.emplace(std::move(ids));
  }
  if (const auto shape = index::payload_shape(version.manifest());
      shape.ok() && version.holds(index::kPayloadDigestsArtifact)) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto digests, version.payload_digests(shape->record_bytes));
    impl.payload_digests = std::make_shared<const index::RecordDigests>(std::move(digests));
  }
  if (version.holds(scoring::kLayoutArtifact) && version.holds(scoring::kHintArtifact)) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto artifacts, version.private_scoring());
    PRIVSEARCH_ASSIGN_OR_RETURN(impl.scoring,
                                core::AccessPrivateScoring::create(std::move(artifacts)));
  }
  return Status();
}

// The provider's word on this index and its parameters: it serves this version (current, or
// one retained after a reload) under the CKKS preset it names; the rerank session for it.
Status agree_with_provider(SearchClient::Impl& impl) {
  const auto& man = impl.manifest;
  PRIVSEARCH_ASSIGN_OR_RETURN(impl.server_info, impl.transport->server_info());
  const auto& info = impl.server_info;
  const auto& retained = info.retained_versions();
  if (info.artifact_version() != man.version_id &&
      std::find(retained.begin(), retained.end(), man.version_id) == retained.end()) {
    return Status(StatusCode::kFailedPrecondition,
                  "the provider serves artifact version " + info.artifact_version().substr(0, 16) +
                      "; this index is " + man.version_id.substr(0, 16) +
                      ": fetch the current index");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto lit, ckks::preset_literal(info.params_name()));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto params, ckks::Params::create(lit));
  if (to_byte_string(params.id()) != info.params_id()) {
    return Status(StatusCode::kFailedPrecondition,
                  "the provider's CKKS parameters differ from preset " + info.params_name());
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(auto session,
                              RerankSession::create(params, impl.projection.output_dim));
  impl.session.emplace(std::move(session));
  impl.provider_floods = info.flood_security_bits() > 0;
  impl.max_private_queries = info.limits().max_private_queries();
  return Status();
}

// The IVF list source: cached segments (memory, and disk unless turned off), fetched by
// FetchLists or, with private_lists, by PIR from the lists' database.
Status open_list_source(const OpenOptions& options, SearchClient::Impl& impl) {
  const auto& info = impl.server_info;
  std::optional<SegmentCache> disk;
  if (options.disk_cache) {
    const auto dir =
        options.list_cache.empty() ? index::default_cache_dir() / "lists" : options.list_cache;
    PRIVSEARCH_ASSIGN_OR_RETURN(auto cache, SegmentCache::open(dir, options.list_cache_bytes));
    disk.emplace(std::move(cache));
  }
  ListSourceLimits limits;
  limits.memory_bytes = options.list_memory_bytes;
  if (info.limits().max_lists_per_fetch() != 0) {
    limits.max_lists_per_fetch = info.limits().max_lists_per_fetch();
  }
  if (info.limits().max_message_bytes() != 0) {
    limits.max_message_bytes = info.limits().max_message_bytes();
  }
  limits.mixed_generations = info.limits().fetch_mixed_generations();
  impl.lists.emplace(impl.ivf.get(), impl.manifest.version_id, impl.transport.get(),
                     std::move(disk), limits);
  if (!options.private_lists) return Status();
  if (!info.limits().pir_ivf_lists()) {
    return failed_precondition_error(
        "private list fetch: this provider does not serve the IVF lists by PIR (start it "
        "with --pir-lists)");
  }
  FetchOptions fo;
  fo.database = v1::PIR_DATABASE_IVF_LISTS;
  fo.allow_insecure = options.allow_insecure_pir;
  PRIVSEARCH_ASSIGN_OR_RETURN(
      impl.list_fetcher, PayloadFetcher::create(*impl.transport, impl.manifest.version_id, fo));
  PRIVSEARCH_RETURN_IF_ERROR(
      impl.lists->fetch_privately(impl.list_fetcher.get(), options.constant_list_fetches));
  impl.list_fetcher->precompute_async();
  return Status();
}

}  // namespace

Result<std::unique_ptr<SearchClient>> SearchClient::open(const std::filesystem::path& index_dir,
                                                         std::unique_ptr<ProviderClient> transport,
                                                         const OpenOptions& options) {
  version::OpenSpec spec;
  spec.role = version::Role::kClient;
  spec.candidates = options.candidates;
  spec.check_trust = [&](const std::filesystem::path& dir, const index::Manifest& man) {
    return check_index_trust(dir, man, options.trust);
  };
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto version, version::IndexVersion::open(index_dir, spec));
  if (options.private_lists && version.candidates() != CandidateIndex::kIvf) {
    return failed_precondition_error(
        "private list fetch needs an IVF index: this client scans the flat PQ artifact (choose "
        "the IVF index with --candidate-index ivf, or use a client-files copy without pq.bin)");
  }
  auto impl = std::make_unique<Impl>();
  impl->transport = std::move(transport);
  impl->manifest = version.manifest();
  PRIVSEARCH_RETURN_IF_ERROR(load_artifacts(version, *impl));
  PRIVSEARCH_RETURN_IF_ERROR(agree_with_provider(*impl));
  if (version.candidates() == CandidateIndex::kIvf) {
    PRIVSEARCH_RETURN_IF_ERROR(open_list_source(options, *impl));
  }
  return std::unique_ptr<SearchClient>(new SearchClient(std::move(impl)));
}

std::string_view stage_name(Stage stage) {
  static constexpr std::array<std::string_view, kStageCount> kNames = {
      "encode", "candidates", "list_fetch", "list_pir", "list_check",
      "masks",  "key_upload", "encrypt",    "rpc",      "decrypt"};
  return kNames[static_cast<std::size_t>(stage)];
}

Query Query::text(std::string_view text) {
  Query q;
  q.kind_ = Kind::kText;
  q.text_ = std::string(text);
  return q;
}

Query Query::vector(std::span<const float> raw) {
  Query q;
  q.kind_ = Kind::kVector;
  q.raw_.assign(raw.begin(), raw.end());
  return q;
}

Query Query::projected(std::span<const double> z) {
  Query q;
  q.kind_ = Kind::kProjected;
  q.projected_.assign(z.begin(), z.end());
  return q;
}

Result<SearchResult> SearchClient::search(const Query& query, const SearchOptions& options) {
  const auto owner = impl_->owner.hold();
  auto& m = *impl_;
  const auto t_start = Clock::now();
  SearchResult out;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto z, m.project(query, out.timing));
  if (options.scoring == Scoring::kAccessPrivate) {
    PRIVSEARCH_RETURN_IF_ERROR(m.private_score(z, options, out));
  } else {
    PRIVSEARCH_RETURN_IF_ERROR(m.rerank(z, options, out));
  }
  out.timing.total_ms = ms_since(t_start);
  return out;
}

std::string SearchClient::document_id(std::uint64_t row) const {
  return impl_->doc_ids ? std::string(impl_->doc_ids->id(row)) : std::string();
}

bool SearchClient::has_private_scoring() const { return impl_->scoring != nullptr; }

Status SearchClient::prepare_private(std::size_t queries) {
  const auto owner = impl_->owner.hold();
  if (!impl_->scoring) return no_scoring_database();
  return impl_->scoring->prepare_masks(queries, impl_->prng);
}

std::vector<float> SearchClient::project_text(std::string_view text) const {
  if (!impl_->encoder) return {};
  return impl_->projection.project_query(impl_->encoder->encode_query(text));
}

std::vector<float> SearchClient::project_vector(std::span<const float> raw_query) const {
  if (raw_query.size() != impl_->projection.input_dim) return {};
  return impl_->projection.project_query(raw_query);
}

std::size_t SearchClient::input_dim() const { return impl_->projection.input_dim; }
std::size_t SearchClient::dim() const { return impl_->projection.output_dim; }

bool SearchClient::uses_ivf() const { return impl_->ivf != nullptr; }

ProviderClient& SearchClient::transport() { return *impl_->transport; }
Result<index::PayloadShape> SearchClient::payload_shape() const {
  return index::payload_shape(impl_->manifest);
}
Result<std::shared_ptr<const index::RecordDigests>> SearchClient::payload_digests() const {
  if (!impl_->payload_digests) {
    return not_found_error("this index copy holds no payload record digests");
  }
  return impl_->payload_digests;
}
const std::string& SearchClient::artifact_version() const { return impl_->manifest.version_id; }

}  // namespace privsearch::client
