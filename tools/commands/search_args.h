// The pieces of `privsearch search` (tools/commands/search.cpp) shared by its files: the parsed
// options, the evaluation over a collection (search_evaluate.cpp) and the printing of results
// (search_print.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "client/payload_fetcher.h"
#include "client/search_client.h"
#include "core/status.h"
#include "index/vectors_io.h"

namespace privsearch::tools::search_command {

struct Args {
  std::filesystem::path index_dir, ca_file, token_file, trust_key, seen_versions;
  std::string host = "127.0.0.1", fingerprint;
  std::uint16_t port = 0;
  bool insecure_loopback = false, permute = true, json = false;
  std::size_t candidates = 100, top = 10;
  std::vector<std::string> queries;
  std::filesystem::path query_vectors;  // .npy (or .fvecs): one query per row
  std::filesystem::path evaluate;
  std::size_t fetch = 0;
  bool pir_test_params = false;
  bool access_private = false;
  std::size_t clusters = scoring::kDefaultClusters;
  std::string candidate_index = "auto";
  std::size_t nprobe = 0;
  std::filesystem::path list_cache;
  bool no_list_cache = false;
  bool private_lists = false;
  bool constant_list_fetches = false;
};

// Prints `s` as the search command's error and returns its exit code.
int failed(const Status& s);

// The user's own query vectors (--query-vectors), checked against the index's raw dimension.
Result<index::Matrix> load_query_vectors(const Args& a, const client::SearchClient& sc);

// --evaluate: every judged query through the encrypted path (search_evaluate.cpp).
int evaluate(const Args& a, client::SearchClient& sc);

// One query's ranked hits, as text or one JSON line (--json).
void print_result(const Args& a, const nlohmann::json& query, const client::SearchResult& r);
// A query skipped for its own reason (nothing to search): a line, or a JSON object with "error".
void print_skipped(const Args& a, const nlohmann::json& query, const Status& why);

// One privately fetched document (the hit it was, its payload and cut flag); `batch`: how many
// documents shared its PirQuery (hintless).
void print_fetched(const Args& a, const client::SearchHit& hit, const index::DecodedPayload& doc,
                   const client::FetchTiming& ft, bool hintless, std::size_t batch);

}  // namespace privsearch::tools::search_command
