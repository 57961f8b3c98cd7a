// BEIR-layout collections: corpus.jsonl ({"_id", "title", "text"}), queries.jsonl ({"_id",
// "text"}) and qrels/<split>.tsv (header line, then query-id <TAB> corpus-id <TAB> score).
//
// Every error names the file and the 1-based line: malformed JSON, a missing or non-string
// field, an empty or duplicate id, a qrels line without three fields or with a non-integer
// score. Lines are streamed, so a large corpus is never held twice.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"

namespace privsearch::index {

struct Document {
  std::string id;
  std::string title;
  std::string text;
};

struct Query {
  std::string id;
  std::string text;
};

// qrels[query id][document id] = graded relevance (> 0 relevant; 0 kept as judged-irrelevant).
using Qrels = std::map<std::string, std::map<std::string, int>>;

struct Collection {
  std::vector<Document> corpus;
  std::vector<Query> queries;
  Qrels qrels;
  std::unordered_map<std::string, std::size_t> doc_index;  // id -> position in corpus
};

Result<std::vector<Document>> load_corpus(const std::filesystem::path& file);
Result<std::vector<Query>> load_queries(const std::filesystem::path& file);
Result<Qrels> load_qrels(const std::filesystem::path& file);

// dir/corpus.jsonl, dir/queries.jsonl, dir/qrels/<split>.tsv. Queries without judgments are
// dropped (BEIR evaluates judged queries only); qrels naming unknown documents or queries are
// an error.
Result<Collection> load_collection(const std::filesystem::path& dir,
                                   const std::string& split = "test");

}  // namespace privsearch::index
