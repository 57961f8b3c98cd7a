// `privsearch bench pir --backend hintless`: the YPIR+SP backend (pir/hintless) on a synthetic
// database of pseudorandom records, with the fields every backend reports side by side:
// online_server_ms (decode the query, answer, encode the response), the provider CPU of one
// fetch, offline_server_cpu_s_per_query (per-client work: none here), preprocess_s (once per
// database version), query/response/key bytes, client_ms and first_fetch_ms (a new client from
// nothing to its record, without the network), and a batch of queries in one pass (`--batch`,
// three by default: one search's top documents).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>

#include "core/status.h"

namespace privsearch::tools {

struct HintlessBenchOptions {
  std::size_t db_mb = 64;
  std::size_t record_bytes = 2048;
  std::size_t runs = 20;
  unsigned threads = 2;
  std::size_t batch = 3;
};

Result<nlohmann::json> run_hintless_pir_bench(const HintlessBenchOptions& options);

}  // namespace privsearch::tools
