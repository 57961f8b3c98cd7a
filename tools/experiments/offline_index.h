// What the offline access-private experiments (eval, audit, bench private) share: the pieces of
// a built index they read, candidate mode's exact rerank, and an in-process provider core with
// a scoring matrix plus the request it answers.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "index/artifacts/exact_store.h"
#include "index/artifacts/manifest.h"
#include "index/candidates/pq.h"
#include "index/candidates/pq_scan.h"
#include "index/candidates/projection.h"
#include "index/encoders/text_encoder.h"
#include "protocol/provider_core.h"
#include "scoring/client/private_query.h"

namespace privsearch::tools {

struct OfflineIndex {
  index::Manifest manifest;
  index::Projection projection;
  std::unique_ptr<index::PqArtifact> pq;  // the scanner keeps a pointer: stable address
  std::optional<index::PqScanner> scanner;
  std::unique_ptr<index::TextEncoder> encoder;  // null when built from external vectors
  std::optional<index::ExactStore> store;
  // Loads (the manifest unverified: experiments read their own build outputs).
  static Result<std::unique_ptr<OfflineIndex>> open(const std::filesystem::path& dir);
};

// The candidates reranked by exact projected scores <z, x>, best first, ties by the smaller id
// (what the encrypted rerank returns). Rows are read as the provider reads them (gather: pread,
// checked, widened), so a float16 store is never widened whole; a row that fails its check
// aborts (experiments read their own builds).
std::vector<std::uint32_t> exact_rerank(const index::ExactStore& store, std::span<const float> z,
                                        std::span<const std::uint32_t> candidates);
// Whether `source` is among the first 10 of `ranked` (Hit@10 of the self-retrieval track).
bool in_top10(const std::vector<std::uint32_t>& ranked, std::size_t source);

// The 10 rows of the store with the largest inner product with `v` over its first v.size()
// coordinates (ties: the smaller row), and the share of `a` that is in `b`: the audits'
// neighbourhood-recovery measure.
std::vector<std::size_t> exact_top10(const index::ExactStore& store, std::span<const double> v);
double top10_overlap(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b);

// A provider core (rerank-n8192 params, one thread's worth of work per call) serving `matrix`
// for `version`, at most `max_queries` cluster queries per request, with no hourly query
// budget (an offline instrument, not a serving provider).
Result<std::unique_ptr<protocol::ProviderCore>> scoring_core(
    const index::ExactStore& store, const std::string& version,
    std::shared_ptr<const scoring::ScoringMatrix> matrix, std::size_t max_queries);

// The PrivateScore request carrying `pending`'s ciphertexts (switched by `drop_bits`).
v1::PrivateScoreRequest private_request(const std::string& version,
                                        const scoring::PendingScore& pending,
                                        std::uint32_t drop_bits);

}  // namespace privsearch::tools
