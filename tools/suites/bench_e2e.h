// `privsearch bench e2e --json`: the private search end to end on a synthetic index, with the
// provider as a separate process over TLS on loopback (DESIGN.md section 9).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace privsearch::tools {

struct E2eBenchOptions {
  std::size_t docs = 1000000;
  std::size_t input_dim = 768;
  std::size_t dim = 672;
  std::size_t pq_m = 96;
  std::size_t k = 100;
  std::size_t queries = 200;             // timed single-client searches (after 5 warm-up ones)
  std::size_t throughput_requests = 60;  // per concurrency level
  std::filesystem::path cache = "build/bench-e2e";  // synthetic indexes are built once here
  std::size_t fetch = 0;    // payloads fetched privately per round: one search's top `fetch`
                            // (hintless: one batch; 0: none)
  std::size_t fetches = 5;  // timed fetch rounds
  std::string pir_backend;  // the provider's --pir-backend (empty: its default, hintless)
  // Fully private rounds: access-private scoring (no candidate id leaves the client), then the
  // top `fetch` documents by PIR, on an index built with the scoring database (private_dim
  // coordinates; its own cache entry). Replaces the candidate-mode timings and throughput.
  bool access_private = false;
  std::uint32_t private_dim = 192;
  // Cold searches on the IVF index with the probed lists fetched by PIR (`--candidate-index ivf
  // --private-lists`, provider `--pir-lists`), then the top `fetch` documents: a new client per
  // round, so no list is cached. Replaces the candidate-mode timings and throughput.
  bool ivf_private_lists = false;
};

// Where the time of a search goes, per timed single-client query (milliseconds).
struct E2eLatencies {
  std::vector<double> online, pq_scan, encrypt, rpc, provider, decrypt;
};

struct E2eThroughput {
  double throughput_rps = 0;
  std::size_t failures = 0;
};

// The private payload fetch after the searches.
struct E2eFetchFigures {
  std::size_t fetch = 0;  // payloads per round
  std::string backend;
  std::vector<double> fetch_ms, wait_ms, provider_ms;
  double provider_core_s_per_round = 0;  // the provider process's CPU over the rounds / rounds
  std::size_t query_bytes = 0, response_bytes = 0, setup_bytes = 0, wrong_payloads = 0;
  std::uint64_t pir_db_bytes = 0;
  double offline_wall_s = 0, offline_cpu_s = 0;
};

// Fully private rounds (E2eBenchOptions::access_private): search and fetch together.
struct E2ePrivateFigures {
  std::vector<double> online_ms, search_ms, fetch_ms;
  double provider_core_s_per_search = 0;  // scoring and the fetch, the provider process's CPU
  std::size_t client_bytes_per_search = 0, hits10 = 0, rounds = 0, wrong_payloads = 0;
  std::string backend;
};

struct E2eBenchResult {
  nlohmann::json machine;
  E2eBenchOptions options;
  E2eLatencies latencies;
  std::size_t request_bytes = 0, response_bytes = 0, key_upload_bytes = 0;
  double provider_core_s_per_search = 0;  // the provider process's CPU over the timed searches
  double first_result_ms = 0;
  std::map<int, E2eThroughput> throughput;  // clients -> figures
  std::optional<E2eFetchFigures> fetch;
  std::optional<E2ePrivateFigures> fully_private;
  std::size_t failures = 0;
  nlohmann::json to_json() const;
};

Result<E2eBenchResult> run_e2e_bench(const E2eBenchOptions& options);

}  // namespace privsearch::tools
