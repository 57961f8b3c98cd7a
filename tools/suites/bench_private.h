// `privsearch bench private --json`: access-private search at scale (its fields in docs/SCALE.md).
//
// Synthetic documents (the e2e suite's cached index, --docs), the scoring database built once
// under build/bench-private/<docs>-<dim>-<rows> and reused (resumable: each file is written
// atomically). Per test query of the self-retrieval track (a noisy copy of a seeded document):
//   candidate mode: the K PQ candidates reranked by exact scores (Hit@10 of the source);
//   access-private: masks prepared (offline, timed as mask_ms), the m cluster queries encrypted,
//   the provider's answer computed by an in-process ProviderCore on one core (server_ms), the
//   scores decoded with the hint (client_ms = encrypt + decode), Hit@10 of the source.
// With a BEIR --dataset (default ../shared/data/scifact when present): nDCG@10 of both modes on
// its index (eval --access-private) and the audit's linkability AUC on the provider's view.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/status.h"
#include "scoring/layout.h"

namespace privsearch::tools {

struct PrivateBenchOptions {
  std::size_t docs = 1000000;
  std::size_t input_dim = 768, dim = 672, pq_m = 96, k = 100;
  std::size_t m = scoring::kDefaultClusters;
  std::uint32_t private_dim = 192;
  std::uint32_t cluster_rows = 0;  // 0: the build's default
  std::uint32_t score_bits = 0;    // 0: the build's default
  double overlap = 0.0;            // scoring::ScoringBuildOptions::overlap
  double fill = 0.9;               // scoring::ScoringBuildOptions::fill
  std::size_t queries = 100;       // timed test queries
  std::filesystem::path cache = "build/bench-e2e";
  std::filesystem::path private_cache = "build/bench-private";
  std::filesystem::path dataset = "../shared/data/scifact";  // empty or absent: skipped
  std::size_t audit_queries = 0;                             // 0: every judged query
};

Result<nlohmann::json> run_private_bench(const PrivateBenchOptions& options);

}  // namespace privsearch::tools
