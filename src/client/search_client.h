// The search client: the one entry for the CLI, Python, the benches and the experiments.
// A search encodes the text with the index's encoder and projects it (public basis); a candidate
// source gives K candidates (the flat PQ scan, or the IVF lists the query routes to: from the
// cache, FetchLists or PIR); one scorer ranks them: the CKKS rerank (search paper, section 3.1:
// the K candidates in random order with the encrypted query, the scores decrypted here) or
// access-private LWE scoring (no candidate leaves: m clusters scored whole). The steps every
// client shares (the unit query, the send order, the ranking, access-private scoring, the PIR
// client, the refusal table, the trust check) are src/client/core's; this object is the
// transport loop around them. The secret key never leaves it; evaluation keys are uploaded once
// per (key epoch, K) and re-uploaded when the provider has evicted them (the transport,
// ProviderClient, already rides out OVERLOADED and transient failures).
// Thread safety: every search holds the client's OwnerLock (core/owner_lock.h): concurrent
// callers (Python threads without the GIL) are served one search at a time, so the CKKS
// session, the LWE mask pool and the CSPRNG always have one user.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "client/core/query_order.h"
#include "client/ivf_lists.h"
#include "client/provider_client.h"
#include "client/trusted_index.h"
#include "core/status.h"
#include "index/artifacts/payload_store.h"
#include "scoring/layout.h"
#include "version/index_version.h"

namespace privsearch::client {

// IVF lists probed per search when the options say 0 (docs/SCALE.md: at 1M documents in lists of
// 250 with spill 2, 32 lists are within 0.01 Hit@10 of the flat scan at 1.7 MB per cold search).
inline constexpr std::size_t kDefaultNprobe = 32;

// Which candidate index the client scans: the flat PQ artifact (every code, part of the index
// download) or the IVF index (index/candidates/ivf.h: the centroids kept, the probed lists fetched
// from the provider and cached). Resolved by version::IndexVersion::open.
using CandidateIndex = version::CandidateIndex;

struct OpenOptions {
  IndexTrust trust;
  // kAuto: flat when the directory holds the PQ artifact's file, else IVF when the manifest
  // lists an IVF index and its directory file is present.
  CandidateIndex candidates = CandidateIndex::kAuto;
  // IVF: where fetched list segments are kept (client/segment_cache.h); empty:
  // index::default_cache_dir() / "lists". disk_cache false: memory only.
  std::filesystem::path list_cache;
  bool disk_cache = true;
  std::uint64_t list_cache_bytes = std::uint64_t{1} << 30;
  std::uint64_t list_memory_bytes = std::uint64_t{64} << 20;  // decoded lists kept in memory
  // IVF: fetch the probed lists not cached by PIR (the provider's --pir-lists) instead of
  // FetchLists: the provider learns how many lists were fetched, not which (docs/SECURITY.md).
  // kFailedPrecondition at open when the provider does not offer it.
  bool private_lists = false;
  // With private_lists: every probed list is fetched by PIR even when cached, so the number of
  // queries the provider sees is nprobe for every search (IvfListSource::fetch_privately).
  bool constant_list_fetches = false;
  bool allow_insecure_pir = false;  // accept the provider's test-only PIR parameters (tests)
};

// What a search looks for.
class Query {
 public:
  // Text, made a vector by the index's encoder (kFailedPrecondition for an index built from
  // external vectors).
  static Query text(std::string_view text);
  // A raw query embedding of the index's input dimension; the index's projection is applied.
  static Query vector(std::span<const float> raw);
  // A direction in the projected space (d' coordinates), normalized here: an audit's chosen
  // query, scored against chosen candidates (SearchOptions::candidate_ids).
  static Query projected(std::span<const double> z);

  enum class Kind { kText, kVector, kProjected };
  Kind kind() const { return kind_; }
  const std::string& as_text() const { return text_; }
  const std::vector<float>& as_vector() const { return raw_; }
  const std::vector<double>& as_projected() const { return projected_; }

 private:
  Kind kind_ = Kind::kText;
  std::string text_;
  std::vector<float> raw_;
  std::vector<double> projected_;
};

// How the candidates are scored: the provider's part of a search.
enum class Scoring {
  kRerank,         // CKKS rerank of the K candidates' exact rows (the provider sees their IDs)
  kAccessPrivate,  // LWE scoring of m whole clusters (the provider sees no candidate, no cluster)
};

struct SearchOptions {
  Scoring scoring = Scoring::kRerank;
  std::size_t candidates = 100;  // K (kAccessPrivate: local candidates whose clusters go first)
  std::size_t nprobe = 0;        // IVF lists probed (0: kDefaultNprobe); ignored by a flat index
  std::size_t top = 10;
  // kRerank: send the candidate IDs in random order (hides the PQ rank order).
  bool permute = true;
  // kRerank: on BUDGET_EXHAUSTED (the provider's per-key-id score budget, a score-oracle
  // guard), start a new key epoch (fresh Galois keys, one upload) and retry; false: report
  // kResourceExhausted.
  bool renew_key_epoch = true;
  // kAccessPrivate: clusters scored per query (m, at most Limits.max_private_queries).
  std::size_t clusters = scoring::kDefaultClusters;
  // kRerank: score exactly these IDs (no candidate scan; the score-oracle audit's choice);
  // SearchResult::candidate_scores is aligned with them. Empty: the candidate index's top K.
  std::vector<std::uint32_t> candidate_ids;
};

// Options for an access-private search of m clusters, the others at their defaults.
inline SearchOptions access_private_search(std::size_t clusters = scoring::kDefaultClusters) {
  SearchOptions o;
  o.scoring = Scoring::kAccessPrivate;
  o.clusters = clusters;
  return o;
}

// One result row (client/core/query_order.h: the browser's hits are the same type).
using SearchHit = core::Hit;

// The stages of a search, in the order they run; which ones run depends on the candidate
// source and the scorer (SearchClient::search).
enum class Stage : std::size_t {
  kEncode,      // text -> vector (the index's encoder)
  kCandidates,  // the candidate source: the flat PQ scan, or IVF routing and the scan of the
                // probed lists' segments as they arrive (items: lists probed)
  kListFetch,   // IVF: waiting for the probed lists not cached (items: segments fetched)
  kListPir,     // IVF by PIR: the list fetches' PIR queries (items) and their bytes
  kListCheck,   // IVF: checking (SHA-256) and decoding the lists, and the caches (items:
                // the probed lists' segments, more than the lists after updates)
  kMasks,       // access-private: masks made during this search (0 when prepared ahead)
  kKeyUpload,   // a new key epoch's rotation keys (bytes sent)
  kEncrypt,     // the query encrypted; with K's keys uploaded it runs on a second thread
                // during kCandidates, off the critical path of total_ms
  kRpc,         // the scorer's request and response
  kDecrypt,     // the scores decrypted and ranked
};
inline constexpr std::size_t kStageCount = 10;
std::string_view stage_name(Stage stage);

struct StageTiming {
  double ms = 0;
  std::size_t bytes_sent = 0, bytes_received = 0;
  std::size_t items = 0;  // what the stage handled (see Stage)
  std::size_t bytes() const { return bytes_sent + bytes_received; }
};

struct SearchTiming {
  std::array<StageTiming, kStageCount> stages{};
  double total_ms = 0;     // the whole search, wall clock
  double provider_ms = 0;  // the provider's own time inside kRpc (its word)
  StageTiming& operator[](Stage s) { return stages[static_cast<std::size_t>(s)]; }
  const StageTiming& operator[](Stage s) const { return stages[static_cast<std::size_t>(s)]; }
};

struct SearchResult {
  std::vector<SearchHit> hits;                  // best first
  std::vector<std::uint32_t> candidates;        // PQ order
  std::vector<double> candidate_scores;         // decrypted, aligned with `candidates`
  std::vector<std::uint32_t> private_clusters;  // access-private: the clusters scored
  std::vector<std::uint32_t> probed_lists;      // IVF: the lists scanned, best first
  SearchTiming timing;
};

class SearchClient {
 public:
  // Loads and verifies the index's public artifacts (manifest, projection, PQ, encoder) and
  // checks that the provider serves the same artifact version and known CKKS parameters. With
  // trust.public_key set, the manifest must be signed by that key and not older than the
  // newest version seen (client/trusted_index.h), checked before any artifact is read.
  static Result<std::unique_ptr<SearchClient>> open(const std::filesystem::path& index_dir,
                                                    std::unique_ptr<ProviderClient> transport,
                                                    const IndexTrust& trust = {});
  static Result<std::unique_ptr<SearchClient>> open(const std::filesystem::path& index_dir,
                                                    std::unique_ptr<ProviderClient> transport,
                                                    const OpenOptions& options);
  ~SearchClient();

  // Whether candidates come from the IVF index (else the flat PQ artifact).
  bool uses_ivf() const;

  // The one search entry: candidates from the index this client opened (the flat PQ scan, or
  // IVF lists fetched or fetched by PIR, or options.candidate_ids), scored by the provider as
  // options.scoring says, decrypted and ranked here.
  Result<SearchResult> search(const Query& query, const SearchOptions& options);
  // The projected query of `text` (unnormalized), for evaluation against plaintext.
  std::vector<float> project_text(std::string_view text) const;
  // The projected query of a raw (input-dimension) vector (unnormalized); empty when its
  // dimension is not the index's.
  std::vector<float> project_vector(std::span<const float> raw_query) const;
  // The index's raw (input) and projected dimensions.
  std::size_t input_dim() const;
  std::size_t dim() const;

  // Access-private search: whether the index has the scoring database; masks for `queries`
  // future cluster queries made ahead of time (the query-independent part of encryption).
  bool has_private_scoring() const;
  Status prepare_private(std::size_t queries);

  // The provider connection and the index's artifact version (for the payload fetch).
  ProviderClient& transport();
  // The payload PIR database shape the signed manifest implies (FetchOptions::expected_shape);
  // kNotFound for an index without payloads.
  Result<index::PayloadShape> payload_shape() const;
  // The signed index's payload record digests (FetchOptions::record_digests); kNotFound for an
  // index built before them or a copy without them.
  Result<std::shared_ptr<const index::RecordDigests>> payload_digests() const;
  const std::string& artifact_version() const;
  // Row `row`'s document id (the corpus _id) from the signed id table the client holds; "" for
  // an index built before ids or a row outside it. Local: nothing is sent.
  std::string document_id(std::uint64_t row) const;

  struct Impl;

 private:
  explicit SearchClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace privsearch::client
