// The client core the web page runs (compiled to WebAssembly by web/wasm/CMakeLists.txt): the
// index's public artifacts opened once (version::IndexVersion over the files the page wrote into
// emscripten's in-memory file system, after checking them against the manifest itself), the
// built-in text encoder and the projection, the flat PQ candidate scan, and the CKKS rerank
// crypto (client::RerankCrypto: the secret key never leaves this object, so never the page).
// Protobuf and the network are the page's JavaScript (web/static/privsearch.js); this core sees
// only our own byte codecs.
//
//   client = BrowserClient::open(dir)                       manifest, projection, PQ, encoder
//   client.agree(params_name, params_id, flood_bits)        the provider's ServerInfo
//   keys   = client.key_set(K)                              one upload per key epoch
//   p      = client.prepare(text, K)                        candidates (sent order) + Enc(z)
//   hits   = client.finish(p.id, response payload, top)     decrypted, ranked, titled
//   client.open_private(dir)                                access-private layout + hint
//   p      = client.prepare_private(text, K, m)              m cluster queries (LWE)
//   hits   = client.finish_private(p.id, answers, top)       decoded, ranked, titled
//   client.pir_agree(backend, info, max_batch)              the provider's PirInfo (payloads)
//   f      = client.prepare_fetch(docs)                     hintless PIR queries, fresh secrets
//   texts  = client.finish_fetch(f.id, answers)             the documents' payloads, verified
//
// The steps are the client core's (src/client/core: the unit query, the send order, the
// ranking, access-private scoring, the PIR client), the ones SearchClient runs, so the page's
// top 10 equal the native client's. Thread safety: one user at a time (an OwnerLock in every
// method); a browser runs it on one thread anyway.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "client/core/pir_client.h"
#include "client/core/private_scoring.h"
#include "client/core/query_order.h"
#include "client/rerank_crypto.h"
#include "core/csprng.h"
#include "core/owner_lock.h"
#include "core/status.h"
#include "index/artifacts/payload_store.h"
#include "index/artifacts/record_digests.h"
#include "index/candidates/pq_scan.h"
#include "index/candidates/projection.h"
#include "index/encoders/text_encoder.h"

namespace privsearch::web {

struct PreparedSearch {
  std::uint32_t id = 0;                   // names the search in finish()
  std::vector<std::uint64_t> candidates;  // in the order sent (a random permutation)
  std::string query;                      // the serialized rerank request (RerankRequest.query)
  double encode_ms = 0, scan_ms = 0, encrypt_ms = 0;
};

using Hit = client::core::Hit;

struct FinishedSearch {
  std::vector<Hit> hits;  // best first
  double decrypt_ms = 0;
};

struct PreparedPrivate {
  std::uint32_t id = 0;       // names the search in finish_private()
  std::uint32_t queries = 0;  // m (PrivateScoreRequest.queries)
  std::string ciphertexts;    // PrivateScoreRequest.ciphertexts
  double encode_ms = 0, scan_ms = 0, masks_ms = 0, encrypt_ms = 0;
};

struct PreparedFetch {
  std::uint32_t id = 0;              // names the fetch in finish_fetch()
  std::vector<std::string> queries;  // PirQueryRequest.queries, one per document
  double query_ms = 0;
};

struct FinishedFetch {
  std::vector<std::string> texts;  // the payloads in the order asked (empty: a deleted document)
  std::vector<bool> cut;           // each document longer than its record, and cut
  double decode_ms = 0;
};

class BrowserClient {
 public:
  static Result<std::unique_ptr<BrowserClient>> open(const std::string& dir);

  const std::string& version_id() const { return version_id_; }
  std::size_t dim() const { return projection_.output_dim; }
  std::size_t documents() const { return documents_; }
  bool has_titles() const { return payloads_.has_value(); }

  // The provider's parameters (ServerInfo.params_name and params_id): a fresh secret key for
  // them; kFailedPrecondition when the name is not a preset or its id differs.
  Status agree(const std::string& params_name, const std::string& params_id, bool floods);
  bool provider_floods() const { return floods_; }
  // A new key epoch for K: the UploadKeysRequest fields.
  Result<client::KeySet> key_set(std::size_t k);
  // Text -> vector -> projected query; the top K of the PQ scan, permuted; Enc(z / |z|).
  Result<PreparedSearch> prepare(const std::string& text, std::size_t k);
  // The decrypted scores of prepared search `id` (forgotten after), the top `top` by score.
  Result<FinishedSearch> finish(std::uint32_t id, const std::string& payload, std::size_t top);
  // Access-private scoring (browser_private.cpp), the native client's steps
  // (client/search_client_scoring.cpp): the layout and hint the page wrote into `dir` beside the
  // artifacts open() checked (the version is opened again, so they are hashed like the others).
  Status open_private(const std::string& dir);
  bool private_ready() const { return scoring_ != nullptr; }
  // K local PQ candidates choose m clusters (0: scoring::kDefaultClusters); the query is
  // encrypted once per cluster. The provider sees m same-size queries, no candidate, no cluster.
  Result<PreparedPrivate> prepare_private(const std::string& text, std::size_t k,
                                          std::size_t clusters);
  // The scores of every document in the m clusters, decoded; the top `top` with titles.
  Result<FinishedSearch> finish_private(std::uint32_t id, const std::string& answers,
                                        std::size_t top);
  // Private fetch over the payloads' PIR database (browser_fetch.cpp). The provider's PirInfo:
  // `backend` (PirBackendKind), its `info` bytes and `max_batch`; kFailedPrecondition unless
  // hintless (the page has no ZipPIR client) and of the shape the checked manifest implies.
  Status pir_agree(int backend, const std::string& info, std::size_t max_batch);
  bool pir_ready() const { return pir_ != nullptr; }
  // Queries for `docs` (one request: at most the batch limit) under fresh secrets, kept here
  // until finish_fetch.
  Result<PreparedFetch> prepare_fetch(std::span<const std::uint64_t> docs);
  // The answers to fetch `id` (forgotten after, whatever the outcome): the payloads, each
  // checked against the signed index's digest once all were decoded.
  Result<FinishedFetch> finish_fetch(std::uint32_t id, const std::vector<std::string>& answers);
  // The projected query of `text`, unnormalized (tests compare it with the native client's).
  std::vector<float> project_text(const std::string& text) const;

 private:
  BrowserClient() = default;
  // The page's hit for a document: its score and, when the payloads are here, its title.
  Hit hit(std::uint64_t doc, double score) const;
  struct Pending {
    rerank::KernelLayout layout;
    std::vector<std::uint32_t> candidates;  // PQ order
    client::core::SendOrder order;
  };
  std::string version_id_;
  std::size_t documents_ = 0;
  index::Projection projection_;
  index::PqCodebook codebook_;
  std::vector<std::vector<std::uint8_t>> blocked_;
  std::vector<index::CodeSegment> segments_;
  std::vector<std::uint32_t> deleted_;
  std::unique_ptr<index::TextEncoder> encoder_;
  std::optional<index::PayloadStore> payloads_;
  std::optional<index::DocIds> doc_ids_;  // every row's document id (the signed table)
  std::optional<client::RerankCrypto> crypto_;
  bool floods_ = false;
  Prng prng_ = Prng::create();  // the candidate permutation and the PIR secrets
  std::map<std::uint32_t, Pending> pending_;
  std::optional<index::PayloadShape> payload_shape_;
  // What each fetched record must match (null: an index built before digests).
  std::shared_ptr<const index::RecordDigests> payload_digests_;
  std::unique_ptr<client::core::AccessPrivateScoring> scoring_;
  std::map<std::uint32_t, scoring::PendingScore> private_pending_;
  client::core::PirClientOptions pir_options_;
  std::unique_ptr<client::core::PirClient> pir_;
  std::map<std::uint32_t, client::core::PirBatch> fetches_;
  std::uint32_t next_id_ = 1;
  OwnerLock owner_;
};

}  // namespace privsearch::web
