// How `privsearch search` prints a result and a privately fetched document (text or JSON lines).
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

namespace privsearch::tools::search_command {

using client::Stage;

void print_skipped(const Args& a, const nlohmann::json& query, const Status& why) {
  if (a.json) {
    fmt::print("{}\n", nlohmann::json{{"query", query},
                                      {"error",
                                       {{"code", std::string(status_code_name(why.code()))},
                                        {"message", why.message()}}}}
                           .dump());
    return;
  }
  fmt::print("query: {}\n  skipped: {}\n",
             query.is_string() ? query.get<std::string>() : query.dump(), why.message());
}

namespace {

// One result as the JSON object `--json` prints (field names are what scripts read).
nlohmann::json result_json(const Args& a, const nlohmann::json& query,
                           const client::SearchResult& r) {
  const auto& t = r.timing;
  nlohmann::json j;
  j["query"] = query;
  // "ids": the hits' rows (what scripts have read so far); "doc_ids": their document ids.
  j["ids"] = nlohmann::json::array();
  j["doc_ids"] = nlohmann::json::array();
  j["scores"] = nlohmann::json::array();
  for (const auto& h : r.hits) {
    j["ids"].push_back(h.doc);
    j["doc_ids"].push_back(h.id);
    j["scores"].push_back(h.score);
  }
  for (const auto& h : r.hits) {
    j["results"].push_back({{"doc", h.doc}, {"id", h.id}, {"score", h.score}, {"title", h.title}});
  }
  j["timing_ms"] = {{"encode", t[Stage::kEncode].ms},
                    {"pq_scan", t[Stage::kCandidates].ms},
                    {"encrypt", t[Stage::kEncrypt].ms},
                    {"rpc", t[Stage::kRpc].ms},
                    {"provider", t.provider_ms},
                    {"decrypt", t[Stage::kDecrypt].ms},
                    {"total", t.total_ms}};
  j["request_bytes"] = t[Stage::kRpc].bytes_sent;
  j["response_bytes"] = t[Stage::kRpc].bytes_received;
  j["key_upload_bytes"] = t[Stage::kKeyUpload].bytes_sent;
  if (!r.probed_lists.empty()) {
    j["ivf"] = {{"lists_probed", t[Stage::kCandidates].items},
                {"list_segments", t[Stage::kListCheck].items},
                {"lists_fetched", t[Stage::kListFetch].items},
                {"list_bytes", t[Stage::kListFetch].bytes_received},
                {"list_fetch_ms", t[Stage::kListFetch].ms}};
    if (a.private_lists) {
      j["ivf"]["pir_fetches"] = t[Stage::kListPir].items;
      j["ivf"]["pir_bytes"] = t[Stage::kListPir].bytes();
    }
  }
  if (a.access_private) {
    j["mode"] = "access-private";
    j["clusters"] = r.private_clusters.size();
    j["timing_ms"]["masks"] = t[Stage::kMasks].ms;
  }
  return j;
}

// The IVF lines of a text result: lists probed, cached and fetched.
void print_ivf(const Args& a, const client::SearchTiming& t) {
  fmt::print(
      "  IVF: {} lists probed, {} segments: {} from the cache, {} fetched from the "
      "provider ({} B, {:.1f} ms)\n",
      t[Stage::kCandidates].items, t[Stage::kListCheck].items,
      t[Stage::kListCheck].items - t[Stage::kListFetch].items, t[Stage::kListFetch].items,
      t[Stage::kListFetch].bytes_received, t[Stage::kListFetch].ms);
  if (a.private_lists) {
    fmt::print("  private list fetch: {} PIR fetches, {} B sent and received\n",
               t[Stage::kListPir].items, t[Stage::kListPir].bytes());
  }
}

}  // namespace

void print_result(const Args& a, const nlohmann::json& query, const client::SearchResult& r) {
  const auto& t = r.timing;
  if (a.json) {
    fmt::print("{}\n", result_json(a, query, r).dump());
    return;
  }
  fmt::print("query: {}\n", query.is_string()
                                ? query.get<std::string>()
                                : "row " + query.dump() + " of " + a.query_vectors.string());
  for (std::size_t i = 0; i < r.hits.size(); ++i) {
    const auto& h = r.hits[i];
    // The document's own id when the index has ids, else its row.
    fmt::print("  {:2}. {:>10}  score {:+.5f}  {}\n", i + 1,
               h.id.empty() ? fmt::format("row {}", h.doc) : h.id.substr(0, 40), h.score,
               h.title.substr(0, 90));
  }
  if (!r.probed_lists.empty()) print_ivf(a, t);
  if (a.access_private) {
    fmt::print(
        "  access-private: {} clusters scored; request {} B, response {} B (the same for every "
        "query); provider {:.1f} ms, end to end {:.1f} ms (masks {:.1f} ms)\n",
        r.private_clusters.size(), t[Stage::kRpc].bytes_sent, t[Stage::kRpc].bytes_received,
        t.provider_ms, t.total_ms, t[Stage::kMasks].ms);
    return;
  }
  fmt::print("  K = {}: request {} B, response {} B{}; provider {:.1f} ms, end to end {:.1f} ms\n",
             r.candidates.size(), t[Stage::kRpc].bytes_sent, t[Stage::kRpc].bytes_received,
             t[Stage::kKeyUpload].bytes_sent
                 ? fmt::format(", keys uploaded {} B", t[Stage::kKeyUpload].bytes_sent)
                 : std::string(),
             t.provider_ms, t.total_ms);
}

// `batch`: how many documents shared the PirQuery whose timing `ft` is (hintless batches).
void print_fetched(const Args& a, const client::SearchHit& hit,
                   const index::DecodedPayload& payload, const client::FetchTiming& ft,
                   bool hintless, std::size_t batch) {
  const std::uint64_t doc = hit.doc;
  const std::string& text = payload.text;
  if (a.json) {
    nlohmann::json j;
    j["fetched_doc"] = doc;
    j["fetched_id"] = hit.id;
    j["text"] = text;
    j["cut"] = payload.cut;
    j["fetch_ms"] = {{"wait", ft.wait_ms},       {"query", ft.query_ms},
                     {"rpc", ft.rpc_ms},         {"provider", ft.provider_ms},
                     {"extract", ft.extract_ms}, {"total", ft.total_ms}};
    j["fetch_query_bytes"] = ft.query_bytes;
    j["fetch_response_bytes"] = ft.response_bytes;
    j["fetch_backend"] = hintless ? "hintless" : "zippir";
    j["fetch_batch"] = batch;
    fmt::print("{}\n", j.dump());
    return;
  }
  if (hintless) {
    fmt::print(
        "  fetched privately (hintless PIR, {} documents in one query batch): doc {} — batch "
        "query {} B, response {} B, provider {:.1f} ms, {:.1f} ms in all\n",
        batch, doc, ft.query_bytes, ft.response_bytes, ft.provider_ms, ft.total_ms);
  } else {
    fmt::print(
        "  fetched privately (ZipPIR): doc {} — query {} B, response {} B, provider "
        "{:.1f} ms, {:.1f} ms after its hint was ready (waited {:.1f} ms)\n",
        doc, ft.query_bytes, ft.response_bytes, ft.provider_ms, ft.total_ms - ft.wait_ms,
        ft.wait_ms);
  }
  std::string shown = text.substr(0, 600);
  if (text.size() > 600) shown += " ...";
  if (!hit.id.empty()) fmt::print("    id {}\n", hit.id);
  fmt::print("    {}\n", shown);
  if (payload.cut) {
    fmt::print(
        "    (cut: the document is longer than the index's payload records; build with "
        "--record-bytes auto to keep every document whole)\n");
  }
}

}  // namespace privsearch::tools::search_command
