// `privsearch search`: the client side of a private search from the command line, and
// `--evaluate`, every judged query of a collection through the encrypted path.
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
#include "index/artifacts/exact_store.h"
#include "index/artifacts/manifest.h"
#include "index/encoders/beir.h"
#include "index/vectors_io.h"
#include "rerank/layout.h"

namespace privsearch::tools {

namespace search_command {

using client::Stage;

int failed(const Status& s) { return fail(s, "search"); }

Result<std::unique_ptr<client::SearchClient>> open_client(const Args& a) {
  client::ConnectOptions co;
  co.host = a.host;
  co.port = a.port;
  co.pinned_fingerprint = a.fingerprint;
  co.insecure_loopback = a.insecure_loopback;
  if (!a.ca_file.empty()) {
    std::ifstream in(a.ca_file);
    std::stringstream s;
    s << in.rdbuf();
    co.ca_pem = s.str();
  }
  if (!a.token_file.empty()) {
    std::ifstream in(a.token_file);
    std::getline(in, co.bearer_token);
    while (!co.bearer_token.empty() &&
           std::isspace(static_cast<unsigned char>(co.bearer_token.back()))) {
      co.bearer_token.pop_back();
    }
    if (co.bearer_token.empty()) {
      return Status(StatusCode::kInvalidArgument, a.token_file.string() + " holds no token");
    }
  } else if (const char* env = std::getenv("PRIVSEARCH_TOKEN"); env != nullptr) {
    co.bearer_token = env;
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(auto transport, client::ProviderClient::connect(co));
  client::OpenOptions oo;
  oo.trust = {a.trust_key, a.seen_versions};
  oo.candidates = a.candidate_index == "flat"  ? client::CandidateIndex::kFlat
                  : a.candidate_index == "ivf" ? client::CandidateIndex::kIvf
                                               : client::CandidateIndex::kAuto;
  oo.list_cache = a.list_cache;
  oo.disk_cache = !a.no_list_cache;
  oo.private_lists = a.private_lists;
  oo.constant_list_fetches = a.constant_list_fetches;
  oo.allow_insecure_pir = a.pir_test_params;
  return client::SearchClient::open(a.index_dir, std::move(transport), oo);
}

// The user's own query vectors, checked against the index's raw dimension (the same
// projection is then applied as to the documents).
Result<index::Matrix> load_query_vectors(const Args& a, const client::SearchClient& sc) {
  PRIVSEARCH_ASSIGN_OR_RETURN(auto m, index::load_vectors(a.query_vectors));
  if (m.rows == 0) {
    return Status(StatusCode::kInvalidArgument, a.query_vectors.string() + " has no rows");
  }
  if (m.cols != sc.input_dim()) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("{} has vectors of dimension {}; the index was built from vectors "
                              "of dimension {}",
                              a.query_vectors.string(), m.cols, sc.input_dim()));
  }
  return m;
}

// The top --fetch documents of one result by PIR: one batch (hintless) or one by one (ZipPIR),
// each shown with its id and whether it was cut to its record.
template <typename SearchResult>
int fetch_top(const Args& a, client::PayloadFetcher& fetcher, const SearchResult& r) {
  std::vector<std::uint64_t> docs;
  for (std::size_t i = 0; i < std::min(a.fetch, r.hits.size()); ++i) docs.push_back(r.hits[i].doc);
  if (docs.empty()) return 0;
  client::FetchTiming ft;
  auto fetched = fetcher.fetch_documents(docs, &ft);
  if (!fetched.ok()) return failed(fetched.status());
  const bool batched = fetcher.hintless();
  for (std::size_t i = 0; i < docs.size(); ++i) {
    print_fetched(a, r.hits[i], (*fetched)[i], ft, batched, batched ? docs.size() : 1);
  }
  return 0;
}

// The private fetch of --fetch, set up before the first search: key setup and the first offsets
// (ZipPIR) start now, off the critical path of the search.
Result<std::unique_ptr<client::PayloadFetcher>> open_fetcher(const Args& a,
                                                             client::SearchClient& sc) {
  client::FetchOptions fo;
  fo.allow_insecure = a.pir_test_params;
  auto shape = sc.payload_shape();
  if (!shape.ok() && shape.status().code() != StatusCode::kNotFound) return shape.status();
  if (shape.ok()) fo.expected_shape = *shape;
  if (auto digests = sc.payload_digests(); digests.ok()) fo.record_digests = *digests;
  PRIVSEARCH_ASSIGN_OR_RETURN(
      auto f, client::PayloadFetcher::create(sc.transport(), sc.artifact_version(), fo));
  if (!a.json) {  // what create() did: the provider's backend decides
    fmt::print(stderr, "private payload fetch: {}\n",
               f->hintless() ? "hintless PIR (no setup; a fresh secret per query)"
                             : "ZipPIR (Paillier keys made, offsets precomputing)");
  }
  f->precompute_async();
  return f;
}

int run(const Args& a) {
  auto sc = open_client(a);
  if (!sc.ok()) return failed(sc.status());
  if (!a.evaluate.empty()) return evaluate(a, **sc);
  client::SearchOptions so;
  so.candidates = a.candidates;
  so.top = a.top;
  so.permute = a.permute;
  so.nprobe = a.nprobe;
  std::unique_ptr<client::PayloadFetcher> fetcher;
  if (a.fetch > 0) {
    auto f = open_fetcher(a, **sc);
    if (!f.ok()) return failed(f.status());
    fetcher = std::move(f).value();
  }
  index::Matrix vectors;
  if (!a.query_vectors.empty()) {
    auto loaded = load_query_vectors(a, **sc);
    if (!loaded.ok()) return failed(loaded.status());
    vectors = std::move(loaded).value();
  }
  const std::size_t count = a.query_vectors.empty() ? a.queries.size() : vectors.rows;
  if (a.access_private) so.scoring = client::Scoring::kAccessPrivate;
  so.clusters = a.clusters;
  std::size_t skipped = 0;
  for (std::size_t qi = 0; qi < count; ++qi) {
    const auto query = a.query_vectors.empty()
                           ? client::Query::text(a.queries[qi])
                           : client::Query::vector(std::span(vectors.row(qi), vectors.cols));
    const auto named = a.query_vectors.empty() ? nlohmann::json(a.queries[qi]) : nlohmann::json(qi);
    auto r = (*sc)->search(query, so);
    // A query with nothing to search (no known word, a zero vector) is this query's problem:
    // said, and the batch goes on.
    if (!r.ok() && r.status().code() == StatusCode::kInvalidArgument) {
      print_skipped(a, named, r.status());
      ++skipped;
      continue;
    }
    if (!r.ok()) return failed(r.status());
    print_result(a, named, *r);
    if (fetcher) {
      const int rc = fetch_top(a, *fetcher, *r);
      if (rc != 0) return rc;
    }
  }
  if (skipped > 0 && !a.json) {
    fmt::print(stderr, "{} of {} queries had nothing to search\n", skipped, count);
  }
  return skipped > 0 ? 3 : 0;
}

}  // namespace search_command

using search_command::Args;

namespace {

// The index, the provider and how this client trusts both.
void add_index_and_provider_options(CLI::App* c, Args& a) {
  c->add_option("--index", a.index_dir, "Index directory (its public artifacts are used)")
      ->required()
      ->check(CLI::ExistingDirectory);
  c->add_option("--host", a.host, "Provider host (default 127.0.0.1)");
  c->add_option("--port", a.port, "Provider port")->required();
  auto* fp = c->add_option("--fingerprint", a.fingerprint,
                           "Pinned SHA-256 fingerprint of the provider's certificate");
  auto* ca = c->add_option("--ca", a.ca_file, "PEM CA (or self-signed certificate) to trust")
                 ->check(CLI::ExistingFile);
  auto* insecure = c->add_flag("--insecure-loopback", a.insecure_loopback,
                               "Plaintext to a loopback provider (testing only)");
  fp->excludes(ca)->excludes(insecure);
  ca->excludes(insecure);
  c->add_option("--trust-key", a.trust_key,
                "The operator's public signing key (keygen-signing's .pub): the index must be "
                "signed by it and not older than any version this client has seen")
      ->check(CLI::ExistingFile);
  c->add_option("--seen-versions", a.seen_versions,
                "With --trust-key: the file remembering the newest signed version seen per key "
                "(default $PRIVSEARCH_STATE_DIR/seen-manifests.json, else "
                "~/.local/state/privsearch/seen-manifests.json)");
  c->add_option("--token-file", a.token_file,
                "File whose first line is this client's bearer token, for providers started "
                "with --auth-tokens (default: $PRIVSEARCH_TOKEN when set)")
      ->check(CLI::ExistingFile);
}

// How many candidates, from where, and what is printed.
void add_candidate_options(CLI::App* c, Args& a) {
  c->add_option("--candidates", a.candidates, "K: PQ candidates reranked (default 100)")
      ->check(CLI::Range(std::size_t{1}, rerank::kMaxCandidates));
  c->add_option("--top", a.top, "Results printed per query (default 10)")
      ->check(CLI::Range(std::size_t{1}, rerank::kMaxCandidates));
  c->add_flag("--permute,!--no-permute", a.permute,
              "Send the candidate IDs in random order (the default; --no-permute sends PQ order "
              "and reveals the PQ ranking to the provider)");
  c->add_flag("--json", a.json, "One JSON object per query");
  c->add_option("--candidate-index", a.candidate_index,
                "Where candidates come from: flat (the PQ artifact, pq.bin), ivf (the IVF "
                "directory, ivf.bin: probed lists fetched from the provider and cached), or auto "
                "= flat when the index directory holds pq.bin (default auto)")
      ->check(CLI::IsMember({"auto", "flat", "ivf"}));
  c->add_option("--nprobe", a.nprobe,
                fmt::format("IVF lists probed per query (default {}; more: better candidates, "
                            "more list bytes)",
                            client::kDefaultNprobe))
      ->check(CLI::Range(1, 1 << 20));
  c->add_option("--list-cache", a.list_cache,
                "Directory of cached IVF list segments (default $PRIVSEARCH_CACHE/lists or "
                "~/.cache/privsearch/lists; at most 1 GiB, least recently used evicted)");
  c->add_flag("--no-list-cache", a.no_list_cache, "Keep fetched IVF lists in memory only");
  c->add_flag("--private-lists", a.private_lists,
              "Fetch the IVF lists by PIR (a provider started with --pir-lists): the provider "
              "learns how many lists were not cached, not which. Each list fetched costs a PIR "
              "query (hintless: batched; ZipPIR: one provider hint and seconds of client work)");
  c->add_flag("--constant-list-fetches", a.constant_list_fetches,
              "With --private-lists: fetch every probed list by PIR even when cached, so the "
              "provider sees nprobe queries per search whatever the cache holds (costlier)")
      ->needs(c->get_option("--private-lists"));
}

// Access-private scoring and the private fetch of documents.
void add_private_mode_options(CLI::App* c, Args& a) {
  c->add_flag("--access-private", a.access_private,
              "Access-private mode: the provider scores whole clusters under LWE encryption and "
              "learns neither the candidates, the clusters, the query nor the results (message "
              "sizes are the same for every query); needs an index built with the scoring "
              "database (the default)");
  c->add_option("--clusters", a.clusters,
                "Access-private: clusters scored per query (m, default 8; more is better recall "
                "and a larger request)")
      ->check(CLI::Range(1, 64));
  c->add_option("--fetch", a.fetch,
                "Fetch the top R documents privately by PIR, in one batch (the provider learns not "
                "which) and print them; against a ZipPIR provider the first fetch waits for key "
                "setup and offline precomputation")
      ->check(CLI::Range(0, 64));
  c->add_flag("--pir-test-params", a.pir_test_params,
              "Accept the provider's INSECURE test PIR parameters (tests only)");
}

}  // namespace

Command add_search_command(CLI::App& parent) {
  auto* c = parent.add_subcommand(
      "search",
      "Private search against a provider: PQ candidates from the local index, encrypted query, "
      "scores decrypted and ranked here. The provider sees the candidate IDs (in random order) "
      "and nothing of the query, the scores or the ranking. A query with nothing to search (no "
      "word the index knows) is reported and skipped; the exit status is then 3");
  auto a = std::make_shared<Args>();
  add_index_and_provider_options(c, *a);
  add_candidate_options(c, *a);
  add_private_mode_options(c, *a);
  auto* queries = c->add_option("query", a->queries, "Query text(s)");
  auto* query_vectors =
      c->add_option("--query-vectors", a->query_vectors,
                    "Your own query embeddings instead of text: .npy (float32 or float64, one "
                    "query per row) or .fvecs, of the dimension the index was built from "
                    "(`privsearch build --doc-vectors`); the index's projection is applied. With "
                    "--json: one object per row with its `ids` and `scores`. With --evaluate: row "
                    "i is the i-th query of the collection's queries.jsonl")
          ->check(CLI::ExistingFile);
  queries->excludes(query_vectors);
  auto* evaluate =
      c->add_option(
           "--evaluate", a->evaluate,
           "Run every judged test query of this BEIR collection through the encrypted path and "
           "report nDCG@10 next to the plaintext rerank of the same candidates (evaluation only: "
           "reads the index's exact store) and the per-request figures")
          ->check(CLI::ExistingDirectory);
  queries->excludes(evaluate);
  c->callback([a, queries, evaluate, query_vectors] {
    if (a->access_private && evaluate->count() > 0) {
      throw CLI::ValidationError(
          "--evaluate runs candidate mode; `privsearch eval --access-private` compares the modes");
    }
    if (queries->count() == 0 && evaluate->count() == 0 && query_vectors->count() == 0) {
      throw CLI::ValidationError("give query text(s), --query-vectors FILE or --evaluate DIR");
    }
  });
  return {c, [a] { return run(*a); }};
}

}  // namespace privsearch::tools
