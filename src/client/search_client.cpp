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
#include "core/bytes.h"
#include "core/csprng.h"
#include "core/elapsed.h"
#include "core/owner_lock.h"
#include "index/artifact_names.h"
#include "index/artifacts.h"
#include "index/atomic_file.h"
#include "index/ivf.h"
#include "index/manifest.h"
#include "index/payload_store.h"
#include "index/pq_scan.h"
#include "index/text_encoder.h"
#include "index/tombstones.h"
#include "index/word_vectors.h"
#include "scoring/client/private_query.h"

namespace privsearch::client {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

struct SearchClient::Impl {
  std::unique_ptr<ProviderClient> transport;
  index::Manifest manifest;
  index::Projection projection;
  // The flat PQ codes of the base and of every update generation, in the scan's block layout
  // (one segment each, ids from each generation's first document).
  index::PqCodebook flat_codebook;
  std::vector<std::vector<std::uint8_t>> flat_blocked;
  std::vector<index::CodeSegment> flat_segments;
  std::vector<std::uint32_t> deleted;  // every update's tombstones, ascending: never candidates
  // Or the IVF index (stable address: the list source keeps a pointer) and its lists.
  std::unique_ptr<index::IvfIndex> ivf;
  std::unique_ptr<PayloadFetcher> list_fetcher;  // private list fetch (the source points to it)
  std::optional<IvfListSource> lists;
  std::unique_ptr<index::TextEncoder> encoder;
  std::optional<index::PayloadStore> payloads;
  std::optional<RerankSession> session;  // the secret key and the key epochs
  // Access-private scoring: the public layout and hint (stable addresses: the scorer keeps
  // pointers) and the scorer with its mask pool.
  std::unique_ptr<scoring::ScoringLayout> scoring_layout;
  std::unique_ptr<scoring::ScoringHint> scoring_hint;
  std::optional<scoring::PrivateScorer> scorer;
  Prng prng = Prng::create();           // the candidate permutation
  OwnerLock owner;  // held by every search: one user of the session, masks and CSPRNG
  // The provider re-randomizes responses (ServerInfo.flood_security_bits > 0): upload a
  // public key with every rotation key set.
  bool provider_floods = false;
  std::uint32_t max_private_queries = 0;  // the provider's Limits (0: not reported)
  v1::ServerInfo server_info;             // as the provider announced it at open

  // A result row, titled from the local payload store when there is one.
  SearchHit hit(std::uint64_t doc, double score) const {
    SearchHit h;
    h.doc = doc;
    h.score = score;
    if (payloads) {
      auto text = payloads->text(doc);
      if (text.ok()) h.title = text.value().substr(0, text.value().find('\n'));
    }
    return h;
  }

  // The top k candidates of the projected query z: the flat scan, or the IVF lists the query
  // routes to (fetched when not cached; their numbers go into `out`).
  Result<std::vector<std::uint32_t>> candidates(const std::vector<float>& z, std::size_t k,
                                                std::size_t nprobe, SearchResult& out) {
    auto& t = out.timing;
    auto t0 = Clock::now();
    if (!ivf) {
      auto found = index::scan_top_k(flat_codebook, flat_segments, z, k, 1, deleted);
      t.pq_scan_ms = ms_since(t0);
      return found;
    }
    out.probed_lists = index::route_query(*ivf, z, nprobe != 0 ? nprobe : kDefaultNprobe);
    PRIVSEARCH_ASSIGN_OR_RETURN(auto scan, index::SegmentScan::create(ivf->codebook, z));
    const double route_ms = ms_since(t0);
    double scan_ms = 0;
    // Each segment is scanned as it comes (cached, or from the response that brought it);
    // `held` keeps the codes alive for the final ranking.
    std::vector<std::shared_ptr<const index::IvfList>> held;
    ListFetchStats stats;
    const auto t_lists = Clock::now();
    PRIVSEARCH_RETURN_IF_ERROR(lists->visit(out.probed_lists, stats, [&](const auto& list) {
      const auto t1 = Clock::now();
      scan.add(list->segment());
      held.push_back(list);
      scan_ms += ms_since(t1);
      return Status();
    }));
    const double lists_ms = ms_since(t_lists);
    t.list_fetch_ms = stats.fetch_ms;
    t.list_check_ms = std::max(0.0, lists_ms - stats.fetch_ms - scan_ms);  // and the cache's
    t.lists_probed = stats.probed;
    t.list_segments = stats.segments;
    t.lists_fetched = stats.fetched;
    t.list_bytes = stats.fetched_bytes;
    if (lists->private_fetch()) {
      t.list_pir_fetches = stats.requests;
      t.list_pir_bytes = stats.pir_bytes;
    }
    t0 = Clock::now();
    auto found = scan.top_k(k, ivf->spill, deleted);
    t.pq_scan_ms = route_ms + scan_ms + ms_since(t0);
    return found;
  }

  // Starts a key epoch for K (fresh rotation keys, one upload) and records its key id.
  Status upload_keys(std::size_t k, SearchTiming& t) {
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto req, session->make_key_upload(k, provider_floods));
    t.key_upload_bytes += req.ByteSizeLong();
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto resp, transport->upload_keys(req));
    if (resp.has_error()) return provider_refusal("the keys", resp.error());
    session->set_key_id(k, resp.key_id());
    return Status::ok_status();
  }

  // Encrypts the unit query z, sends the candidate IDs in the given order, decrypts the scores
  // (aligned with `ids`). Re-uploads keys on UNKNOWN_KEY_ID; on BUDGET_EXHAUSTED starts a new key
  // epoch when the options allow, else returns kResourceExhausted.
  // `encrypted`: z already encrypted for K = ids.size() (made while the candidates were found).
  Result<std::vector<double>> score(const std::vector<double>& z,
                                    const std::vector<std::uint64_t>& ids,
                                    const SearchOptions& options, SearchTiming& t,
                                    std::optional<EncryptedQuery> encrypted = std::nullopt) {
    if (!session->key_id(ids.size())) {
      PRIVSEARCH_RETURN_IF_ERROR(upload_keys(ids.size(), t));
    }
    auto t0 = Clock::now();
    PendingRerank pending;
    if (encrypted && encrypted->k == ids.size()) {
      PRIVSEARCH_ASSIGN_OR_RETURN(
          pending, session->complete_request(std::move(*encrypted), ids, manifest.version_id));
    } else {
      PRIVSEARCH_ASSIGN_OR_RETURN(pending, session->build_request({z, ids, manifest.version_id}));
      t.encrypt_ms = ms_since(t0);
    }

    v1::RerankResponse resp;
    int key_renewals = 0;
    for (;;) {
      t.request_bytes = pending.request.ByteSizeLong();
      t0 = Clock::now();
      PRIVSEARCH_ASSIGN_OR_RETURN(resp, transport->rerank(pending.request));
      t.rpc_ms = ms_since(t0);
      if (!resp.has_error()) break;
      const auto code = resp.error().code();
      // An evicted key set, or (when allowed) a used-up budget: a new key epoch, once.
      const bool renew = code == v1::UNKNOWN_KEY_ID ||
                         (code == v1::BUDGET_EXHAUSTED && options.renew_key_epoch);
      if (!renew || key_renewals++ > 0) break;
      PRIVSEARCH_RETURN_IF_ERROR(upload_keys(ids.size(), t));
      pending.request.set_key_id(*session->key_id(ids.size()));
    }
    t.provider_ms = resp.provider_ms();
    t.response_bytes = resp.ByteSizeLong();
    t0 = Clock::now();
    auto scores = session->decode_response(pending, resp);
    t.decrypt_ms = ms_since(t0);
    return scores;
  }
};

SearchClient::SearchClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SearchClient::~SearchClient() = default;

Result<std::unique_ptr<SearchClient>> SearchClient::open(
    const std::filesystem::path& index_dir, std::unique_ptr<ProviderClient> transport,
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
  if (version.holds(scoring::kLayoutArtifact) && version.holds(scoring::kHintArtifact)) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto artifacts, version.private_scoring());
    // Stable addresses: the scorer keeps pointers to both.
    impl.scoring_layout = std::make_unique<scoring::ScoringLayout>(std::move(artifacts.layout));
    impl.scoring_hint = std::make_unique<scoring::ScoringHint>(std::move(artifacts.hint));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto scorer, scoring::PrivateScorer::create(
                                                 impl.scoring_layout.get(), impl.scoring_hint.get()));
    impl.scorer.emplace(std::move(scorer));
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
                      "; this index is " + man.version_id.substr(0, 16) + ": fetch the current index");
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
    const auto dir = options.list_cache.empty() ? index::default_cache_dir() / "lists"
                                                : options.list_cache;
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

Result<std::unique_ptr<SearchClient>> SearchClient::open(
    const std::filesystem::path& index_dir, std::unique_ptr<ProviderClient> transport,
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

namespace {

// Encodes `text` with the index's encoder and runs `search` on the vector, adding the encoding
// time to the result's timing.
template <typename Search>
Result<SearchResult> search_text(const index::TextEncoder* encoder, std::string_view text,
                                 Search&& search) {
  if (encoder == nullptr) {
    return Status(StatusCode::kFailedPrecondition,
                  "this index was built from external vectors: search with a query vector");
  }
  const auto t0 = Clock::now();
  const auto q = encoder->encode_query(text);
  const double encode_ms = ms_since(t0);
  auto r = search(q);
  if (r.ok()) {
    r.value().timing.encode_ms = encode_ms;
    r.value().timing.total_ms += encode_ms;
  }
  return r;
}

}  // namespace

Result<SearchResult> SearchClient::search(std::string_view text, const SearchOptions& options) {
  const auto owner = impl_->owner.hold();
  return search_text(impl_->encoder.get(), text,
                     [&](const std::vector<float>& q) { return search_vector(q, options); });
}

bool SearchClient::has_private_scoring() const { return impl_->scorer.has_value(); }

namespace {
Status no_scoring_database() {
  return Status(StatusCode::kFailedPrecondition,
                "this index has no access-private scoring database (rebuild without "
                "--no-access-private)");
}
}  // namespace

Status SearchClient::prepare_private(std::size_t queries) {
  const auto owner = impl_->owner.hold();
  if (!impl_->scorer) return no_scoring_database();
  return impl_->scorer->prepare(queries, impl_->prng);
}

Result<SearchResult> SearchClient::search_private(std::string_view text,
                                                  const PrivateSearchOptions& options) {
  const auto owner = impl_->owner.hold();
  return search_text(impl_->encoder.get(), text, [&](const std::vector<float>& q) {
    return search_private_vector(q, options);
  });
}

Result<SearchResult> SearchClient::search_private_vector(std::span<const float> raw_query,
                                                         const PrivateSearchOptions& options) {
  const auto owner = impl_->owner.hold();
  auto& m = *impl_;
  const auto t_start = Clock::now();
  if (!m.scorer) return no_scoring_database();
  if (raw_query.size() != m.projection.input_dim) {
    return Status(StatusCode::kInvalidArgument, "query vector of dimension " +
                                                    std::to_string(raw_query.size()) +
                                                    "; the index expects " +
                                                    std::to_string(m.projection.input_dim));
  }
  if (options.clusters == 0) {
    return Status(StatusCode::kInvalidArgument, "--clusters must be at least 1");
  }
  if (m.max_private_queries != 0 && options.clusters > m.max_private_queries) {
    return Status(StatusCode::kInvalidArgument,
                  "--clusters " + std::to_string(options.clusters) + ": the provider scores at most " +
                      std::to_string(m.max_private_queries) + " clusters per request");
  }
  const auto& layout = *m.scoring_layout;
  SearchResult out;
  auto& t = out.timing;
  const auto z = m.projection.project_query(raw_query);
  if (std::all_of(z.begin(), z.end(), [](float v) { return v == 0.0f; })) {
    return Status(StatusCode::kInvalidArgument, "the query has no known terms");
  }
  const std::size_t k = std::min<std::size_t>(options.candidates, m.manifest.documents);
  if (k > 0) {
    PRIVSEARCH_ASSIGN_OR_RETURN(out.candidates, m.candidates(z, k, options.nprobe, out));
  }
  auto t0 = Clock::now();
  out.private_clusters = m.scorer->choose_clusters(z, out.candidates, options.clusters);
  t0 = Clock::now();
  if (m.scorer->prepared() < out.private_clusters.size()) {
    PRIVSEARCH_RETURN_IF_ERROR(
        m.scorer->prepare(out.private_clusters.size() - m.scorer->prepared(), m.prng));
    t.mask_ms = ms_since(t0);
  }
  t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(auto pending, m.scorer->encrypt(z, out.private_clusters, m.prng));
  v1::PrivateScoreRequest request;
  request.set_artifact_version(m.manifest.version_id);
  request.set_queries(static_cast<std::uint32_t>(out.private_clusters.size()));
  request.set_ciphertexts(scoring::pack_queries(pending.queries, layout.query_drop_bits));
  t.encrypt_ms = ms_since(t0);
  t.request_bytes = request.ByteSizeLong();
  t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto response, m.transport->private_score(request));
  t.rpc_ms = ms_since(t0);
  if (response.has_error()) return provider_refusal("the private scoring", response.error());
  t.response_bytes = response.ByteSizeLong();
  t.provider_ms = response.provider_ms();
  t0 = Clock::now();
  const std::size_t expected = scoring::packed_answer_bytes(
      out.private_clusters.size() * layout.shape.cluster_rows, layout.shape.answer_bits);
  if (response.answers().size() != expected) {
    return Status(StatusCode::kDataLoss,
                  fmt::format("private scoring answer of {} bytes; this index's answers take {}",
                              response.answers().size(), expected));
  }
  auto scored = m.scorer->decode(std::move(pending), response.answers());
  if (!scored.ok()) return Status(StatusCode::kDataLoss, scored.status().message());
  t.decrypt_ms = ms_since(t0);
  for (std::size_t i = 0; i < std::min(options.top, scored->size()); ++i) {
    out.hits.push_back(m.hit((*scored)[i].doc, static_cast<double>((*scored)[i].score)));
  }
  t.total_ms = ms_since(t_start);
  return out;
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

Result<SearchResult> SearchClient::search_vector(std::span<const float> raw_query,
                                                 const SearchOptions& options) {
  const auto owner = impl_->owner.hold();
  auto& m = *impl_;
  const auto t_start = Clock::now();
  if (raw_query.size() != m.projection.input_dim) {
    return Status(StatusCode::kInvalidArgument, "query vector of dimension " +
                                                    std::to_string(raw_query.size()) +
                                                    "; the index expects " +
                                                    std::to_string(m.projection.input_dim));
  }
  const std::size_t k = std::min<std::size_t>(options.candidates, m.manifest.documents);
  if (k == 0) return Status(StatusCode::kInvalidArgument, "--candidates must be at least 1");
  SearchResult out;
  auto& t = out.timing;

  // Project and normalize (|z| = 1 keeps every score inside the provider's compact bound).
  auto z32 = m.projection.project_query(raw_query);
  double norm = 0;
  for (const float v : z32) norm += static_cast<double>(v) * v;
  norm = std::sqrt(norm);
  if (norm == 0) return Status(StatusCode::kInvalidArgument, "the query has no known terms");
  std::vector<double> z(z32.size());
  for (std::size_t i = 0; i < z.size(); ++i) z[i] = z32[i] / norm;
  // The query's ciphertext depends only on z and K: when K's keys are uploaded it is made on a
  // second thread while the candidates are fetched and scanned (the session is not used by this
  // thread meanwhile). Fewer candidates than K (a tiny collection) discard it.
  std::future<std::pair<Result<EncryptedQuery>, double>> early;
  if (m.session->key_id(k)) {
    early = std::async(std::launch::async, [&m, &z, k] {
      const auto t0 = Clock::now();
      auto e = m.session->encrypt_query(z, k);
      return std::make_pair(std::move(e), ms_since(t0));
    });
  }
  auto found = m.candidates(z32, k, options.nprobe, out);
  std::optional<EncryptedQuery> encrypted;
  if (early.valid()) {
    auto [e, ms] = early.get();
    if (e.ok()) {
      encrypted = std::move(e).value();
      t.encrypt_ms = ms;
    }
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(out.candidates, std::move(found));

  // The order sent to the provider: a uniformly random permutation (CSPRNG) unless disabled.
  std::vector<std::size_t> order(out.candidates.size());
  std::iota(order.begin(), order.end(), 0);
  if (options.permute) {
    for (std::size_t i = order.size(); i > 1; --i) {
      const auto j = static_cast<std::size_t>(m.prng.uniform_below(i));
      std::swap(order[i - 1], order[j]);
    }
  }

  std::vector<std::uint64_t> sent(order.size());
  for (std::size_t s = 0; s < order.size(); ++s) sent[s] = out.candidates[order[s]];
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto sent_scores,
                              m.score(z, sent, options, t, std::move(encrypted)));
  out.candidate_scores.assign(out.candidates.size(), 0.0);
  for (std::size_t s = 0; s < order.size(); ++s) out.candidate_scores[order[s]] = sent_scores[s];

  std::vector<std::size_t> rank(out.candidates.size());
  std::iota(rank.begin(), rank.end(), 0);
  std::stable_sort(rank.begin(), rank.end(), [&](std::size_t a, std::size_t b) {
    return out.candidate_scores[a] > out.candidate_scores[b];
  });
  for (std::size_t i = 0; i < std::min(options.top, rank.size()); ++i) {
    out.hits.push_back(m.hit(out.candidates[rank[i]], out.candidate_scores[rank[i]]));
  }
  t.total_ms = ms_since(t_start);
  return out;
}

Result<std::vector<double>> SearchClient::score_candidates(std::span<const double> query,
                                                           std::span<const std::uint32_t> ids,
                                                           const SearchOptions& options,
                                                           SearchTiming* timing) {
  const auto owner = impl_->owner.hold();
  auto& m = *impl_;
  if (query.size() != m.projection.output_dim) {
    return Status(StatusCode::kInvalidArgument, "projected query of dimension " +
                                                    std::to_string(query.size()) + "; expected " +
                                                    std::to_string(m.projection.output_dim));
  }
  if (ids.empty()) return Status(StatusCode::kInvalidArgument, "no candidate IDs");
  double norm = 0;
  for (const double v : query) norm += v * v;
  if (norm == 0) return Status(StatusCode::kInvalidArgument, "the query is zero");
  std::vector<double> z(query.begin(), query.end());
  for (double& v : z) v /= std::sqrt(norm);
  SearchTiming t;
  auto r = m.score(z, std::vector<std::uint64_t>(ids.begin(), ids.end()), options, t);
  if (timing != nullptr) *timing = t;
  return r;
}

bool SearchClient::uses_ivf() const { return impl_->ivf != nullptr; }

ProviderClient& SearchClient::transport() { return *impl_->transport; }
Result<index::PayloadShape> SearchClient::payload_shape() const {
  return index::payload_shape(impl_->manifest);
}
const std::string& SearchClient::artifact_version() const { return impl_->manifest.version_id; }

}  // namespace privsearch::client
