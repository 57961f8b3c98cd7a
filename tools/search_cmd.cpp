#include "search_cmd.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "client/search_client.h"

namespace privsearch::tools {
namespace {

struct Args {
  std::filesystem::path index_dir, ca_file;
  std::string host = "127.0.0.1", fingerprint;
  std::uint16_t port = 0;
  bool insecure_loopback = false, no_permute = false, json = false;
  std::size_t candidates = 100, top = 10;
  std::vector<std::string> queries;
};
Args args;

int fail(const Status& s) {
  fmt::print(stderr, "privsearch search: {}\n", s.to_string());
  return 1;
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
  c->add_flag("--no-permute", args.no_permute,
              "Send the candidate IDs in PQ order (reveals the PQ ranking; default permutes)");
  c->add_flag("--json", args.json, "One JSON object per query");
  c->add_option("query", args.queries, "Query text(s)")->required();
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
  so.permute = !args.no_permute;
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
  }
  return 0;
}

}  // namespace privsearch::tools
