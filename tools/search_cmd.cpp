#include "search_cmd.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "client/payload_fetcher.h"
#include "client/search_client.h"
#include "eval/metrics.h"
#include "index/beir.h"
#include "index/exact_store.h"
#include "index/manifest.h"

namespace privsearch::tools {
namespace {

struct Args {
  std::filesystem::path index_dir, ca_file;
  std::string host = "127.0.0.1", fingerprint;
  std::uint16_t port = 0;
  bool insecure_loopback = false, permute = true, json = false;
  std::size_t candidates = 100, top = 10;
  std::vector<std::string> queries;
  std::filesystem::path evaluate;
  std::size_t fetch = 0;
  bool pir_test_params = false;
};
Args args;

int fail(const Status& s) {
  fmt::print(stderr, "privsearch search: {}\n", s.to_string());
  return 1;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size()))) - 1;
  return v[std::min(i, v.size() - 1)];
}

// Every judged query through the encrypted path; nDCG@10 against the plaintext rerank of the
// same K candidates (exact store of the index: evaluation only).
int evaluate(client::SearchClient& sc, client::SearchOptions so) {
  auto col = index::load_collection(args.evaluate);
  if (!col.ok()) return fail(col.status());
  const auto& c = col.value();
  auto man = index::load_manifest(args.index_dir, /*verify=*/false);
  if (!man.ok()) return fail(man.status());
  if (man.value().documents != c.corpus.size()) {
    return fail(Status(StatusCode::kFailedPrecondition,
                       "the collection's corpus does not match the index's documents"));
  }
  auto store = index::ExactStore::open(args.index_dir / man.value().find("exact_store")->file);
  if (!store.ok()) return fail(store.status());
  so.top = 10;
  std::vector<double> enc_ndcg, plain_ndcg, total, provider, rpc;
  std::size_t same_top10 = 0, req_bytes = 0, resp_bytes = 0, key_bytes = 0;
  for (std::size_t qi = 0; qi < c.queries.size(); ++qi) {
    const auto& q = c.queries[qi];
    auto r = sc.search(q.text, so);
    if (r.status().code() == StatusCode::kInvalidArgument) {  // no known terms
      enc_ndcg.push_back(0);
      plain_ndcg.push_back(0);
      continue;
    }
    if (!r.ok()) return fail(r.status());
    const auto& res = r.value();
    std::vector<std::string> enc_ids;
    for (const auto& h : res.hits) enc_ids.push_back(c.corpus[h.doc].id);
    // Plaintext rerank: exact <z, x> of the same candidates (no decrypted value involved).
    std::vector<std::string> plain_ids;
    {
      auto qz = sc.project_text(q.text);
      std::vector<std::pair<double, std::uint32_t>> exact;
      for (const auto d : res.candidates) {
        double s = 0;
        for (std::size_t j = 0; j < store.value().cols(); ++j) s += qz[j] * store.value().row(d)[j];
        exact.push_back({s, d});
      }
      std::stable_sort(exact.begin(), exact.end(),
                       [](const auto& a, const auto& b) { return a.first > b.first; });
      for (std::size_t i = 0; i < std::min<std::size_t>(10, exact.size()); ++i) {
        plain_ids.push_back(c.corpus[exact[i].second].id);
      }
    }
    same_top10 += enc_ids == plain_ids ? 1 : 0;
    const auto& judged = c.qrels.at(q.id);
    enc_ndcg.push_back(eval::ndcg_at(enc_ids, judged, 10));
    plain_ndcg.push_back(eval::ndcg_at(plain_ids, judged, 10));
    total.push_back(res.timing.total_ms);
    provider.push_back(res.timing.provider_ms);
    rpc.push_back(res.timing.rpc_ms);
    req_bytes = res.timing.request_bytes;
    resp_bytes = res.timing.response_bytes;
    key_bytes += res.timing.key_upload_bytes;
    if (!args.json && (qi + 1) % 50 == 0) {
      fmt::print(stderr, "  {} / {} queries\n", qi + 1, c.queries.size());
    }
  }
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (const double x : v) s += x;
    return v.empty() ? 0 : s / static_cast<double>(v.size());
  };
  nlohmann::json j;
  j["collection"] = args.evaluate.filename().string();
  j["queries"] = c.queries.size();
  j["candidates"] = so.candidates;
  j["ndcg@10_encrypted"] = mean(enc_ndcg);
  j["ndcg@10_plaintext_rerank"] = mean(plain_ndcg);
  j["identical_top10_fraction"] =
      static_cast<double>(same_top10) / static_cast<double>(std::max<std::size_t>(1, total.size()));
  j["end_to_end_ms"] = {{"median", percentile(total, 0.5)}, {"p95", percentile(total, 0.95)}};
  j["provider_ms"] = {{"median", percentile(provider, 0.5)}, {"p95", percentile(provider, 0.95)}};
  j["rpc_ms"] = {{"median", percentile(rpc, 0.5)}, {"p95", percentile(rpc, 0.95)}};
  j["request_bytes"] = req_bytes;
  j["response_bytes"] = resp_bytes;
  j["key_upload_bytes"] = key_bytes;
  if (args.json) {
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("{} queries of {}, K = {}:\n", c.queries.size(), j["collection"].get<std::string>(),
               so.candidates);
    fmt::print("  nDCG@10 encrypted path   {:.4f}\n", j["ndcg@10_encrypted"].get<double>());
    fmt::print("  nDCG@10 plaintext rerank {:.4f}  (same candidates, exact scores)\n",
               j["ndcg@10_plaintext_rerank"].get<double>());
    fmt::print("  identical top-10 order   {:.1f}% of queries\n",
               100 * j["identical_top10_fraction"].get<double>());
    fmt::print("  per request: end to end {:.1f} ms median ({:.1f} p95), provider {:.1f} ms, "
               "request {} B, response {} B; keys uploaded once: {} B\n",
               percentile(total, 0.5), percentile(total, 0.95), percentile(provider, 0.5),
               req_bytes, resp_bytes, key_bytes);
  }
  return 0;
}

}  // namespace

SearchCommand add_search_command(CLI::App& app) {
  auto* c = app.add_subcommand(
      "search",
      "Private search against a provider: PQ candidates from the local index, encrypted query, "
      "scores decrypted and ranked here. The provider sees the candidate IDs (in random order) "
      "and nothing of the query, the scores or the ranking");
  c->add_option("--index", args.index_dir, "Index directory (its public artifacts are used)")
      ->required()
      ->check(CLI::ExistingDirectory);
  c->add_option("--host", args.host, "Provider host (default 127.0.0.1)");
  c->add_option("--port", args.port, "Provider port")->required();
  auto* fp = c->add_option("--fingerprint", args.fingerprint,
                           "Pinned SHA-256 fingerprint of the provider's certificate");
  auto* ca = c->add_option("--ca", args.ca_file, "PEM CA (or self-signed certificate) to trust")
                 ->check(CLI::ExistingFile);
  auto* insecure = c->add_flag("--insecure-loopback", args.insecure_loopback,
                               "Plaintext to a loopback provider (testing only)");
  fp->excludes(ca)->excludes(insecure);
  ca->excludes(insecure);
  c->add_option("--candidates", args.candidates, "K: PQ candidates reranked (default 100)")
      ->check(CLI::Range(1, 65536));
  c->add_option("--top", args.top, "Results printed per query (default 10)")
      ->check(CLI::Range(1, 65536));
  c->add_flag("--permute,!--no-permute", args.permute,
              "Send the candidate IDs in random order (the default; --no-permute sends PQ order "
              "and reveals the PQ ranking to the provider)");
  c->add_flag("--json", args.json, "One JSON object per query");
  c->add_option("--fetch", args.fetch,
                "Fetch the top R documents privately by ZipPIR (the provider learns not which) "
                "and print them; the first fetch waits for key setup and offline precomputation")
      ->check(CLI::Range(0, 64));
  c->add_flag("--pir-test-params", args.pir_test_params,
              "Accept the provider's INSECURE test PIR parameters (tests only)");
  auto* queries = c->add_option("query", args.queries, "Query text(s)");
  auto* evaluate = c->add_option(
      "--evaluate", args.evaluate,
      "Run every judged test query of this BEIR collection through the encrypted path and "
      "report nDCG@10 next to the plaintext rerank of the same candidates (evaluation only: "
      "reads the index's exact store) and the per-request figures")
      ->check(CLI::ExistingDirectory);
  queries->excludes(evaluate);
  c->callback([queries, evaluate] {
    if (queries->count() == 0 && evaluate->count() == 0) {
      throw CLI::ValidationError("give query text(s) or --evaluate DIR");
    }
  });
  return SearchCommand{c};
}

int SearchCommand::run() const {
  client::ConnectOptions co;
  co.host = args.host;
  co.port = args.port;
  co.pinned_fingerprint = args.fingerprint;
  co.insecure_loopback = args.insecure_loopback;
  if (!args.ca_file.empty()) {
    std::ifstream in(args.ca_file);
    std::stringstream s;
    s << in.rdbuf();
    co.ca_pem = s.str();
  }
  auto transport = client::ProviderClient::connect(co);
  if (!transport.ok()) return fail(transport.status());
  auto sc = client::SearchClient::open(args.index_dir, std::move(transport).value());
  if (!sc.ok()) return fail(sc.status());
  client::SearchOptions so;
  so.candidates = args.candidates;
  so.top = args.top;
  so.permute = args.permute;
  if (!args.evaluate.empty()) return evaluate(*sc.value(), so);
  std::unique_ptr<client::PayloadFetcher> fetcher;
  if (args.fetch > 0) {
    // Key setup and the first offsets start now, off the critical path of the search.
    client::FetchOptions fo;
    fo.allow_insecure = args.pir_test_params;
    if (!args.json) fmt::print(stderr, "setting up private payload fetch (Paillier keys)...\n");
    auto f = client::PayloadFetcher::create(sc.value()->transport(),
                                            sc.value()->artifact_version(), fo);
    if (!f.ok()) return fail(f.status());
    fetcher = std::move(f).value();
    fetcher->precompute_async();
  }
  for (const auto& q : args.queries) {
    auto r = sc.value()->search(q, so);
    if (!r.ok()) return fail(r.status());
    const auto& t = r.value().timing;
    if (args.json) {
      nlohmann::json j;
      j["query"] = q;
      for (const auto& h : r.value().hits) {
        j["results"].push_back({{"doc", h.doc}, {"score", h.score}, {"title", h.title}});
      }
      j["timing_ms"] = {{"encode", t.encode_ms},   {"pq_scan", t.pq_scan_ms},
                        {"encrypt", t.encrypt_ms}, {"rpc", t.rpc_ms},
                        {"provider", t.provider_ms}, {"decrypt", t.decrypt_ms},
                        {"total", t.total_ms}};
      j["request_bytes"] = t.request_bytes;
      j["response_bytes"] = t.response_bytes;
      j["key_upload_bytes"] = t.key_upload_bytes;
      fmt::print("{}\n", j.dump());
    } else {
      fmt::print("query: {}\n", q);
      for (std::size_t i = 0; i < r.value().hits.size(); ++i) {
        const auto& h = r.value().hits[i];
        fmt::print("  {:2}. doc {:>7}  score {:+.5f}  {}\n", i + 1, h.doc, h.score,
                   h.title.substr(0, 90));
      }
      fmt::print("  K = {}: request {} B, response {} B{}; provider {:.1f} ms, end to end "
                 "{:.1f} ms\n",
                 r.value().candidates.size(), t.request_bytes, t.response_bytes,
                 t.key_upload_bytes ? fmt::format(", keys uploaded {} B", t.key_upload_bytes)
                                    : std::string(),
                 t.provider_ms, t.total_ms);
    }
    for (std::size_t i = 0; fetcher && i < std::min(args.fetch, r.value().hits.size()); ++i) {
      const auto& h = r.value().hits[i];
      client::FetchTiming ft;
      auto text = fetcher->fetch(h.doc, &ft);
      if (!text.ok()) return fail(text.status());
      if (args.json) {
        nlohmann::json j;
        j["fetched_doc"] = h.doc;
        j["text"] = text.value();
        j["fetch_ms"] = {{"wait", ft.wait_ms},       {"query", ft.query_ms},
                         {"rpc", ft.rpc_ms},         {"provider", ft.provider_ms},
                         {"extract", ft.extract_ms}, {"total", ft.total_ms}};
        j["fetch_query_bytes"] = ft.query_bytes;
        j["fetch_response_bytes"] = ft.response_bytes;
        fmt::print("{}\n", j.dump());
      } else {
        fmt::print("  fetched privately (ZipPIR): doc {} — query {} B, response {} B, provider "
                   "{:.1f} ms, {:.1f} ms after its hint was ready (waited {:.1f} ms)\n",
                   h.doc, ft.query_bytes, ft.response_bytes, ft.provider_ms,
                   ft.total_ms - ft.wait_ms, ft.wait_ms);
        std::string shown = text.value().substr(0, 600);
        if (text.value().size() > 600) shown += " ...";
        fmt::print("    {}\n", shown);
      }
    }
  }
  return 0;
}

}  // namespace privsearch::tools
