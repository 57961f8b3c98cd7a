// SearchClient's state and the stages of a search (internal to src/client): the candidate
// sources (the flat scan, IVF lists fetched or by PIR, or the caller's IDs) in candidates(), and
// the two scorers, the CKKS rerank (search_client_scoring.cpp: rerank()) and access-private LWE
// scoring (private_score()). SearchClient::search runs one of each for every query.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/core/private_scoring.h"
#include "client/core/refusal.h"
#include "client/ivf_lists.h"
#include "client/payload_fetcher.h"
#include "client/provider_client.h"
#include "client/rerank_session.h"
#include "client/search_client.h"
#include "core/csprng.h"
#include "core/elapsed.h"
#include "core/owner_lock.h"
#include "index/artifacts/manifest.h"
#include "index/artifacts/payload_store.h"
#include "index/candidates/ivf.h"
#include "index/candidates/pq.h"
#include "index/candidates/pq_scan.h"
#include "index/candidates/projection.h"
#include "index/encoders/text_encoder.h"

namespace privsearch::client {

using Clock = std::chrono::steady_clock;

// kFailedPrecondition: the index has no access-private scoring database.
Status no_scoring_database();

// A query in the projected space: as the candidate scan reads it (float, unnormalized) and as
// the scorers encrypt it (unit length: |z| = 1 keeps every score inside the provider's
// compact bound).
struct ProjectedQuery {
  std::vector<float> scan;
  std::vector<double> unit;
};

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
  std::optional<index::DocIds> doc_ids;  // every row's document id (the signed table)
  // What each privately fetched payload record is checked against (null: not in this index).
  std::shared_ptr<const index::RecordDigests> payload_digests;
  std::optional<RerankSession> session;  // the secret key and the key epochs
  // Access-private scoring: the public layout and hint, the scorer with its mask pool.
  std::unique_ptr<core::AccessPrivateScoring> scoring;
  Prng prng = Prng::create();  // the candidate permutation
  OwnerLock owner;             // held by every search: one user of the session, masks and CSPRNG
  // The provider re-randomizes responses (ServerInfo.flood_security_bits > 0): upload a
  // public key with every rotation key set.
  bool provider_floods = false;
  std::uint32_t max_private_queries = 0;  // the provider's Limits (0: not reported)
  v1::ServerInfo server_info;             // as the provider announced it at open

  // The stages of SearchClient::search (search_client_scoring.cpp): the query in the projected
  // space, then one scorer over the candidates.
  Result<ProjectedQuery> project(const Query& query, SearchTiming& t) const;
  Status rerank(const ProjectedQuery& z, const SearchOptions& options, SearchResult& out);
  Status private_score(const ProjectedQuery& z, const SearchOptions& options, SearchResult& out);

  // A result row, named by its id and titled from the local payload store when they are here.
  SearchHit hit(std::uint64_t doc, double score) const {
    return core::make_hit(doc, score, doc_ids ? &*doc_ids : nullptr,
                          payloads ? &*payloads : nullptr);
  }

  // The top k candidates of the projected query z: the flat scan, or the IVF lists the query
  // routes to (fetched when not cached; their numbers go into `out`).
  Result<std::vector<std::uint32_t>> candidates(const std::vector<float>& z, std::size_t k,
                                                std::size_t nprobe, SearchResult& out) {
    auto& t = out.timing;
    auto t0 = Clock::now();
    if (!ivf) {
      auto found = index::scan_top_k(flat_codebook, flat_segments, z, k, 1, deleted);
      t[Stage::kCandidates].ms = ms_since(t0);
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
    t[Stage::kListFetch].ms = stats.fetch_ms;
    t[Stage::kListCheck].ms =
        std::max(0.0, lists_ms - stats.fetch_ms - scan_ms);  // and the cache's
    t[Stage::kCandidates].items = stats.probed;
    t[Stage::kListCheck].items = stats.segments;
    t[Stage::kListFetch].items = stats.fetched;
    t[Stage::kListFetch].bytes_received = stats.fetched_bytes;
    if (lists->private_fetch()) {
      t[Stage::kListPir].items = stats.requests;
      t[Stage::kListPir].bytes_sent = stats.pir_query_bytes;
      t[Stage::kListPir].bytes_received = stats.pir_response_bytes;
    }
    t0 = Clock::now();
    auto found = scan.top_k(k, ivf->spill, deleted);
    t[Stage::kCandidates].ms = route_ms + scan_ms + ms_since(t0);
    return found;
  }

  // Starts a key epoch for K (fresh rotation keys, one upload) and records its key id.
  Status upload_keys(std::size_t k, SearchTiming& t) {
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto req, session->make_key_upload(k, provider_floods));
    t[Stage::kKeyUpload].bytes_sent += req.ByteSizeLong();
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
      t[Stage::kEncrypt].ms = ms_since(t0);
    }

    v1::RerankResponse resp;
    int key_renewals = 0;
    for (;;) {
      t[Stage::kRpc].bytes_sent = pending.request.ByteSizeLong();
      t0 = Clock::now();
      PRIVSEARCH_ASSIGN_OR_RETURN(resp, transport->rerank(pending.request));
      t[Stage::kRpc].ms = ms_since(t0);
      if (!resp.has_error()) break;
      // An evicted key set, or (when allowed) a used-up budget: a new key epoch, once.
      if (!core::renews_key_epoch(resp.error().code(), options.renew_key_epoch) ||
          key_renewals++ > 0) {
        break;
      }
      PRIVSEARCH_RETURN_IF_ERROR(upload_keys(ids.size(), t));
      pending.request.set_key_id(*session->key_id(ids.size()));
    }
    t.provider_ms = resp.provider_ms();
    t[Stage::kRpc].bytes_received = resp.ByteSizeLong();
    t0 = Clock::now();
    auto scores = session->decode_response(pending, resp);
    t[Stage::kDecrypt].ms = ms_since(t0);
    return scores;
  }
};

}  // namespace privsearch::client
