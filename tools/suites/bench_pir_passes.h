// Per-shard PIR throughput against one server's, measured so that this VM's drift cancels:
// the online answer's D . qu pass (pir/lwe/kernels.h matvec_u8_u32, the part of the answer that
// reads the database) over the whole matrix and over each row shard's own copy of its rows
// (as create_shard holds them), interleaved round by round. A ratio is taken within one round
// (shard GB/s over the single server's GB/s of the same round), so a slow minute slows both.
// No hint or Paillier work: the comparison runs at sizes whose offline hint would take hours.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/status.h"
#include "pir/lwe/database.h"
#include "pir/zippir/zippir_params.h"

namespace privsearch::tools {

struct PirPassComparison {
  std::size_t shards = 0, rounds = 0;
  std::size_t single_bytes = 0;
  std::vector<std::size_t> shard_bytes;
  std::vector<double> single_ms;              // one per round
  std::vector<std::vector<double>> shard_ms;  // [shard][round]
  std::vector<double> ratio;                  // [round x shard]: shard GB/s / single GB/s
  nlohmann::json to_json() const;
};

// `rounds` interleaved rounds (after one warm-up round) over `db` and its `shards`-way row split.
// The database is left as it was.
Result<PirPassComparison> compare_shard_passes(const pir::ZipPirParams& params,
                                               const pir::LweDatabase& db, std::size_t shards,
                                               std::size_t rounds);

}  // namespace privsearch::tools
