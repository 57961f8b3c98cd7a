// `privsearch bench ivf --json`: the IVF-partitioned public index.
//
// Synthetic documents (the e2e suite's cached index, --docs): the IVF lists are built once from
// its exact rows and PQ codes under build/bench-ivf/ (resumable: ivf.bin is written last), all
// lists decoded in memory, then per nprobe over the self-retrieval track's test queries:
//   hit10_ivf (the probed lists' PQ top K reranked by exact scores) next to hit10_flat (the flat
//   scan's), scan_ms (route + scan of the probed lists, lists in memory), probed_bytes (what a
//   cold client fetches per search) and client_bytes_per_search_warm (fetched per search by a
//   client whose cache holds --warm-cache-mb, over the second half of the queries);
//   client_bytes_first_search (manifest + projection + ivf.bin + the first search's lists) next
//   to flat_client_bytes (manifest + projection + pq.bin).
// With a BEIR --dataset (default ../shared/data/scifact when present): its index with IVF lists
// (built-in lexical encoder, d' = 672), nDCG@10 per nprobe next to flat, and the leakage of
// probed-list sets next to candidate sets: the linkability AUC of two halves of one query's
// set (centroids of the lists' centroids, or of the candidates' exact rows) and the top-10
// neighbourhood the provider recovers from the whole set.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/status.h"

namespace privsearch::tools {

struct IvfBenchOptions {
  std::size_t docs = 1000000;
  std::size_t input_dim = 768, dim = 672, pq_m = 96, k = 100;
  std::size_t lists = 0;      // 0: default_ivf_lists(N)
  std::size_t route_dim = 0;  // 0: the build's default (capped at d')
  std::size_t spill = 2;      // lists per document (the build's default)
  std::size_t list_pq_m = 0;  // the lists' PQ subquantizers (0: the flat artifact's)
  std::vector<std::size_t> nprobe{16, 32, 64};
  std::size_t queries = 200;  // self-retrieval test queries
  std::uint64_t warm_cache_mb = 64;
  std::filesystem::path cache = "build/bench-e2e";
  std::filesystem::path ivf_cache = "build/bench-ivf";
  std::filesystem::path dataset = "../shared/data/scifact";  // empty or absent: skipped
  std::size_t dataset_lists = 0;                        // 0: default_ivf_lists(N) of the collection
  std::vector<std::size_t> dataset_nprobe{1, 2, 4, 8};  // of its (few) lists
};

Result<nlohmann::json> run_ivf_bench(const IvfBenchOptions& options);

}  // namespace privsearch::tools
