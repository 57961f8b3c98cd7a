// `privsearch bench scale --json --docs N`: the index at 10M documents and beyond,
// on synthetic documents (harness/synthetic_index.h) built once under
// build/bench-scale/ by the streaming build (index/build_streaming.h: resumable, progress on
// stderr; a rerun after an interruption continues from the last durable block).
//
// Figures (one JSON object): the build (build_s of the run that finished it, whether it resumed,
// peak resident memory, bytes on disk per artifact); what a client downloads before its first
// result with the IVF index (manifest + projection + ivf.bin + the probed lists) next to the flat
// artifact, and per warm search (an LRU cache of --warm-cache-mb); scan_ms (route + scan of the
// probed lists, in memory) next to the flat scan; Hit@10 of the self-retrieval track (queries
// as `eval --self-retrieval` makes them) for IVF and flat candidates, each reranked by exact
// scores from the store; and online_ms end to end (encode, route, fetch lists, scan, encrypt,
// provider rerank over TLS, decrypt) from a thin IVF client to a provider process on loopback;
// then an update (index/artifacts/append.h) of the served copy: update_bytes (flat and IVF client)
// next to the flat artifact, update_apply_s (provider: SIGHUP until it serves it; client: copy the
// new files and reopen), and whether the appended documents are found. Limits: synthetic vectors (a
// low-rank latent model), not text; one machine runs both sides.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/status.h"
#include "index/artifacts/exact_store.h"

namespace privsearch::tools {

struct ScaleBenchOptions {
  std::size_t docs = 10'000'000;
  std::size_t input_dim = 768, dim = 672, pq_m = 96, k = 100;
  std::size_t lists = 0;      // 0: default_ivf_lists(N)
  std::size_t route_dim = 0;  // 0: kIvfDefaultRouteDim
  std::size_t spill = 2;
  std::vector<std::size_t> nprobe{32};  // the first one also for the online part
  std::size_t queries = 200;            // self-retrieval queries (scan, bytes, Hit@10)
  std::size_t online_queries = 100;     // end-to-end searches through the provider (0: skipped)
  std::uint64_t warm_cache_mb = 64;
  // Documents appended to the served copy after the online searches, as a fraction of docs (a
  // tenth as many deleted); 0: no update figures. Needs online_queries > 0 (a provider).
  double update_fraction = 0.01;
  // float16 by default: at 10M the float32 store (27 GB) exceeds this machine's memory, and the
  // rerank's quality on float16 is measured (docs/SCALE.md).
  index::StoreDtype store_dtype = index::StoreDtype::kFloat16;
  std::filesystem::path cache = "build/bench-scale";
};

Result<nlohmann::json> run_scale_bench(const ScaleBenchOptions& options);

}  // namespace privsearch::tools
