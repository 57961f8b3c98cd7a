#include "index/encoders/beir.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

namespace privsearch::index {

namespace {

Status open_error(const std::filesystem::path& file) {
  return not_found_error(fmt::format("cannot open `{}`", file.string()));
}

Status line_error(const std::filesystem::path& file, std::size_t line, const std::string& what) {
  return data_loss_error(fmt::format("{}:{}: {}", file.string(), line, what));
}

// Reads a required string field of a JSON object.
Status string_field(const nlohmann::json& obj, const char* name, bool required,
                    const std::filesystem::path& file, std::size_t line, std::string& out) {
  const auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) {
    if (required) return line_error(file, line, fmt::format("missing field `{}`", name));
    out.clear();
    return Status();
  }
  if (!it->is_string()) {
    return line_error(file, line, fmt::format("field `{}` is not a string", name));
  }
  out = it->get<std::string>();
  return Status();
}

template <typename Record, typename Fill>
Result<std::vector<Record>> load_jsonl(const std::filesystem::path& file, Fill fill) {
  std::ifstream in(file);
  if (!in) return open_error(file);
  std::vector<Record> out;
  std::set<std::string> seen;
  std::string text;
  std::size_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank line
    nlohmann::json obj = nlohmann::json::parse(text, nullptr, false);
    if (obj.is_discarded() || !obj.is_object()) {
      return line_error(file, line, "not a JSON object");
    }
    Record r;
    PRIVSEARCH_RETURN_IF_ERROR(fill(obj, line, r));
    if (r.id.empty()) return line_error(file, line, "empty `_id`");
    if (!seen.insert(r.id).second) {
      return line_error(file, line, fmt::format("duplicate `_id` \"{}\"", r.id));
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

Result<std::vector<Document>> load_corpus(const std::filesystem::path& file) {
  return load_jsonl<Document>(
      file, [&](const nlohmann::json& obj, std::size_t line, Document& d) -> Status {
        PRIVSEARCH_RETURN_IF_ERROR(string_field(obj, "_id", true, file, line, d.id));
        PRIVSEARCH_RETURN_IF_ERROR(string_field(obj, "title", false, file, line, d.title));
        return string_field(obj, "text", true, file, line, d.text);
      });
}

Result<std::vector<Query>> load_queries(const std::filesystem::path& file) {
  return load_jsonl<Query>(
      file, [&](const nlohmann::json& obj, std::size_t line, Query& q) -> Status {
        PRIVSEARCH_RETURN_IF_ERROR(string_field(obj, "_id", true, file, line, q.id));
        return string_field(obj, "text", true, file, line, q.text);
      });
}

Result<Qrels> load_qrels(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return open_error(file);
  Qrels qrels;
  std::string text;
  std::size_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.empty()) continue;
    std::vector<std::string> fields;
    std::size_t start = 0;
    for (;;) {
      const std::size_t tab = text.find('\t', start);
      fields.push_back(
          text.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
      if (tab == std::string::npos) break;
      start = tab + 1;
    }
    if (line == 1 && fields.size() == 3 && fields[0] == "query-id") continue;  // header
    if (fields.size() != 3 || fields[0].empty() || fields[1].empty()) {
      return line_error(file, line, "expected query-id<TAB>corpus-id<TAB>score");
    }
    int score = 0;
    std::size_t used = 0;
    try {
      score = std::stoi(fields[2], &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != fields[2].size()) {
      return line_error(file, line, fmt::format("score `{}` is not an integer", fields[2]));
    }
    auto& judged = qrels[fields[0]];
    if (!judged.emplace(fields[1], score).second) {
      return line_error(file, line,
                        fmt::format("duplicate judgment for ({}, {})", fields[0], fields[1]));
    }
  }
  return qrels;
}

Result<Collection> load_collection(const std::filesystem::path& dir, const std::string& split) {
  Collection c;
  PRIVSEARCH_ASSIGN_OR_RETURN(c.corpus, load_corpus(dir / "corpus.jsonl"));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto queries, load_queries(dir / "queries.jsonl"));
  PRIVSEARCH_ASSIGN_OR_RETURN(c.qrels, load_qrels(dir / "qrels" / (split + ".tsv")));
  for (std::size_t i = 0; i < c.corpus.size(); ++i) c.doc_index.emplace(c.corpus[i].id, i);
  std::set<std::string> query_ids;
  for (auto& q : queries) {
    query_ids.insert(q.id);
    if (c.qrels.count(q.id) != 0) c.queries.push_back(std::move(q));
  }
  for (const auto& [qid, judged] : c.qrels) {
    if (query_ids.count(qid) == 0) {
      return data_loss_error(fmt::format("qrels name query `{}` that queries.jsonl lacks", qid));
    }
    for (const auto& [did, score] : judged) {
      (void)score;
      if (c.doc_index.count(did) == 0) {
        return data_loss_error(
            fmt::format("qrels name document `{}` (query `{}`) that corpus.jsonl lacks", did, qid));
      }
    }
  }
  return c;
}

}  // namespace privsearch::index
