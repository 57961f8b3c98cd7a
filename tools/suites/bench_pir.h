// `privsearch bench pir`: ZipPIR on a synthetic database (pseudorandom bytes) at the paper's
// parameters: LWE n = 1400, q = 2^32, binary secret, 3072-bit Paillier. One client; online
// answers on one thread, offline hint on all cores.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"
#include "harness/measure.h"
#include "pir/lwe/database.h"
#include "pir/zippir/zippir_params.h"
#include "suites/bench_pir_passes.h"

namespace privsearch::tools {

struct PirBenchOptions {
  std::vector<std::size_t> db_mb = {1024};
  std::size_t record_bytes = 16384;
  std::size_t runs = 20;
  unsigned threads = 0;  // offline; 0 = all cores
  int paillier_bits = 3072;
  int hint_bits = 0;  // 0 = default
  // Hintless only: queries per timed batch (one search's fetches or probed lists in one pass).
  std::size_t batch = 3;
  // Row shard counts to measure besides the single server (pir/zippir/zippir_shard.h): each
  // shard's answer is timed alone (shards run on their own machines), fetch_ms is the slowest
  // shard plus the coordinator's assembly, and the assembled bytes are compared with the single
  // server's response to the same query.
  std::vector<std::size_t> shards;
  // Only the interleaved D . qu passes of the single server and of each shard count
  // (suites/bench_pir_passes.h): no hint, no Paillier, so it runs at 1 GiB and beyond in seconds.
  bool passes_only = false;
};

struct PirShardFigures {
  std::size_t shards = 0;
  std::vector<double> shard_online_ms, shard_db_pass_ms, shard_offline_s;
  std::vector<std::size_t> shard_db_bytes;
  double assemble_ms = 0;
  bool identical = false, recovered = false;
  nlohmann::json to_json() const;
};

// The online answer timed over `runs` repetitions of one query, with its parts.
struct PirOnlineFigures {
  TimingStats answer;
  std::vector<double> db_ms, hint_ms, conv_ms, mv_ms, crt_ms;
  std::vector<std::uint8_t> response;
};

// One database size.
struct PirSizeResult {
  std::size_t db_mb = 0, records = 0, record_bytes = 0;
  pir::DatabaseShape shape;
  pir::ZipPirParams params;
  std::size_t packed_rows = 0, state_bytes_per_query = 0;
  double preprocess_s = 0, keygen_s = 0, offline_wall = 0, offline_cpu = 0, offsets_s = 0;
  double client_query_ms = 0, extract_ms = 0;
  std::size_t query_bytes = 0, setup_bytes = 0;
  unsigned threads = 0;
  bool recovered = false;
  PirOnlineFigures online;
  std::vector<PirShardFigures> sharded;
  std::vector<PirPassComparison> passes;  // one per shard count
  bool passes_only = false;
  nlohmann::json to_json() const;
};

struct PirBenchResult {
  nlohmann::json machine;
  std::vector<PirSizeResult> sizes;
  // One size: its fields at the top level; several: a "sizes" array.
  nlohmann::json to_json() const;
};

Result<PirBenchResult> run_pir_bench(const PirBenchOptions& options);

// The fields every PIR backend reports side by side, from a ZipPIR size result:
// online_server_ms, offline_server_cpu_s_per_query, preprocess_s, query/response/key bytes,
// client_ms and first_fetch_ms (key generation, setup, the offline hint, offsets, query, answer
// and extraction of a new client, without the network).
nlohmann::json zippir_backend_fields(const PirSizeResult& r);

// `bench pir --backend hintless,zippir --db-mb M.. --record-bytes R..`: every backend at every
// (M, R) in one run, one object per measurement under "results", and per (M, R) the ratios of
// ZipPIR's per-fetch provider CPU to the hintless one's.
Result<nlohmann::json> run_pir_backends(const PirBenchOptions& options,
                                        const std::vector<std::string>& backends,
                                        const std::vector<std::size_t>& record_sizes);

}  // namespace privsearch::tools
