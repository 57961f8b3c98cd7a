// `privsearch search --evaluate`: every judged query of a collection through the encrypted path,
// nDCG@10 against the plaintext rerank of the same candidates.
#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "client/payload_fetcher.h"
#include "client/search_client.h"
#include "commands/command.h"
#include "commands/search_args.h"
#include "eval/statistics.h"
#include "experiments/encrypted_queries.h"
#include "index/artifacts/artifact_names.h"
#include "index/artifacts/exact_store.h"
#include "index/encoders/beir.h"
#include "index/vectors_io.h"
#include "rerank/layout.h"
#include "version/index_version.h"

namespace privsearch::tools::search_command {

namespace {

nlohmann::json evaluation_json(const Args& a, std::size_t queries, const EncryptedRunTotals& t) {
  const auto e2e = eval::describe(t.end_to_end_ms), provider = eval::describe(t.provider_ms),
             rpc = eval::describe(t.rpc_ms);
  nlohmann::json j;
  j["collection"] = a.evaluate.filename().string();
  j["queries"] = queries;
  j["candidates"] = a.candidates;
  j["ndcg@10_encrypted"] = eval::describe(t.ndcg_encrypted).mean;
  j["ndcg@10_plaintext_rerank"] = eval::describe(t.ndcg_plaintext).mean;
  j["identical_top10_fraction"] = t.top10_match_fraction();
  j["end_to_end_ms"] = {{"median", e2e.median}, {"p95", e2e.p95}};
  j["provider_ms"] = {{"median", provider.median}, {"p95", provider.p95}};
  j["rpc_ms"] = {{"median", rpc.median}, {"p95", rpc.p95}};
  j["request_bytes"] = t.request_bytes;
  j["response_bytes"] = t.response_bytes;
  j["key_upload_bytes"] = t.key_upload_bytes;
  return j;
}

void print_evaluation(const nlohmann::json& j) {
  fmt::print("{} queries of {}, K = {}:\n", j["queries"].get<std::size_t>(),
             j["collection"].get<std::string>(), j["candidates"].get<std::size_t>());
  fmt::print("  nDCG@10 encrypted path   {:.4f}\n", j["ndcg@10_encrypted"].get<double>());
  fmt::print("  nDCG@10 plaintext rerank {:.4f}  (same candidates, exact scores)\n",
             j["ndcg@10_plaintext_rerank"].get<double>());
  fmt::print("  identical top-10 order   {:.1f}% of queries\n",
             100 * j["identical_top10_fraction"].get<double>());
  fmt::print(
      "  per request: end to end {:.1f} ms median ({:.1f} p95), provider {:.1f} ms, "
      "request {} B, response {} B; keys uploaded once: {} B\n",
      j["end_to_end_ms"]["median"].get<double>(), j["end_to_end_ms"]["p95"].get<double>(),
      j["provider_ms"]["median"].get<double>(), j["request_bytes"].get<std::size_t>(),
      j["response_bytes"].get<std::size_t>(), j["key_upload_bytes"].get<std::size_t>());
}

}  // namespace

// Every judged query through the encrypted path; nDCG@10 against the plaintext rerank of the
// same K candidates (exact store of the index: evaluation only).
int evaluate(const Args& a, client::SearchClient& sc) {
  auto col = index::load_collection(a.evaluate);
  if (!col.ok()) return failed(col.status());
  const auto& c = col.value();
  const auto v = version::IndexVersion::open(a.index_dir, version::tool_spec());
  if (!v.ok()) return failed(v.status());
  if (v->manifest().documents != c.corpus.size()) {
    return failed(Status(StatusCode::kFailedPrecondition,
                         "the collection's corpus does not match the index's documents"));
  }
  auto store = v->exact_store();
  if (!store.ok()) {
    return failed(
        store.status().code() == StatusCode::kNotFound
            ? Status(StatusCode::kNotFound, "the index has no exact store to evaluate with")
            : store.status());
  }
  // With --query-vectors: row i is the i-th query of queries.jsonl (all of them, in file order).
  index::Matrix vectors;
  std::map<std::string, std::size_t> row_of;
  if (!a.query_vectors.empty()) {
    auto all = index::load_queries(a.evaluate / "queries.jsonl");
    if (!all.ok()) return failed(all.status());
    auto loaded = load_query_vectors(a, sc);
    if (!loaded.ok()) return failed(loaded.status());
    vectors = std::move(loaded).value();
    if (vectors.rows != all->size()) {
      return failed(Status(StatusCode::kInvalidArgument,
                           fmt::format("{} has {} rows; {} lists {} queries (one row per query, "
                                       "in file order)",
                                       a.query_vectors.string(), vectors.rows,
                                       (a.evaluate / "queries.jsonl").string(), all->size())));
    }
    for (std::size_t i = 0; i < all->size(); ++i) row_of[(*all)[i].id] = i;
  }
  EncryptedRunTotals totals;
  for (std::size_t qi = 0; qi < c.queries.size(); ++qi) {
    std::span<const float> raw;
    if (!row_of.empty()) raw = std::span(vectors.row(row_of.at(c.queries[qi].id)), vectors.cols);
    auto r = run_encrypted_query(sc, *store, c, c.queries[qi], a.candidates, raw);
    if (r.status().code() == StatusCode::kInvalidArgument) {  // no known terms
      totals.add_no_known_terms();
      continue;
    }
    if (!r.ok()) return failed(r.status());
    totals.add(*r);
    if (!a.json && (qi + 1) % 50 == 0) {
      fmt::print(stderr, "  {} / {} queries\n", qi + 1, c.queries.size());
    }
  }
  const auto j = evaluation_json(a, c.queries.size(), totals);
  if (a.json) {
    fmt::print("{}\n", j.dump(2));
  } else {
    print_evaluation(j);
  }
  return 0;
}

}  // namespace privsearch::tools::search_command
