// A tiny BEIR collection on disk (400 documents unless told, 32-d vectors with low-rank
// structure) for index-building and provider-process tests. Removed with the object.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "index/artifacts/append.h"
#include "index/artifacts/payload_store.h"
#include "index/build.h"
#include "index/vectors_io.h"
#include "testing/test_util.h"

namespace privsearch::testing {

// Coordinate `col` of row `row`: low-rank structure plus noise drawn from `noise`, so the
// projection has something to find and appended rows look like the collection's.
inline float collection_value(std::size_t row, std::size_t col, Prng& noise) {
  return static_cast<float>(std::sin(0.1 * double(row) * double(col % 5 + 1)) +
                            0.05 * uniform_pm1(noise));
}

struct Collection {
  explicit Collection(const std::string& tag = "build", std::size_t rows = 400)
      : dir(std::filesystem::temp_directory_path() /
            ("privsearch-" + tag + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "qrels");
    std::ofstream corpus(dir / "corpus.jsonl");
    Prng p = test_prng(77);
    vectors.rows = rows;
    vectors.cols = 32;
    for (std::size_t i = 0; i < rows; ++i) {
      corpus << R"({"_id": "doc)" << i << R"(", "title": "Title )" << i
             << R"(", "text": "text of document )" << i << "\"}\n";
      for (std::size_t c = 0; c < 32; ++c) vectors.data.push_back(collection_value(i, c, p));
    }
    std::ofstream(dir / "queries.jsonl") << R"({"_id": "q1", "text": "x"})"
                                         << "\n";
    std::ofstream(dir / "qrels" / "test.tsv") << "q1\tdoc1\t1\n";
    EXPECT_TRUE(index::save_npy(dir / "vectors.npy", vectors).ok());
  }
  ~Collection() { std::filesystem::remove_all(dir); }
  std::filesystem::path dir;
  index::Matrix vectors;
};

// An update's input: `count` documents with ids from `first` on (id "n<i>", title "New <i>",
// text "added text <i>"), their 32-d vectors drawn like the collection's with noise from
// `seed`; no deletions.
inline index::AppendInput appended_documents(std::size_t first, std::size_t count,
                                             std::uint64_t seed = 99) {
  index::AppendInput in;
  in.vectors = index::Matrix{count, 32, {}};
  Prng noise = test_prng(seed);
  for (std::size_t i = first; i < first + count; ++i) {
    for (std::size_t c = 0; c < 32; ++c) in.vectors.data.push_back(collection_value(i, c, noise));
    const auto id = std::to_string(i);
    in.documents.push_back({"n" + id, "New " + id, "added text " + id});
  }
  return in;
}

// The collection's index as the provider-process tests build it: its own vectors, d' = 16,
// PQ M = 4, payload records of `record_bytes`, under dir/index.
inline index::BuildOptions tiny_index_options(const Collection& c, std::size_t record_bytes) {
  index::BuildOptions o;
  o.collection = c.dir;
  o.doc_vectors = c.dir / "vectors.npy";
  o.out = c.dir / "index";
  o.dim = 16;
  o.pq_m = 4;
  o.record_bytes = record_bytes;
  return o;
}

// The collection's index built as tiny_index_options says, and its payload store opened (null,
// with a test failure, when either fails).
inline std::unique_ptr<index::PayloadStore> build_tiny_payloads(const Collection& c,
                                                                std::size_t record_bytes) {
  const auto o = tiny_index_options(c, record_bytes);
  const auto built = index::build_index(o, nullptr);
  EXPECT_TRUE(built.ok()) << built.status().to_string();
  auto store = index::PayloadStore::open(o.out / "payloads.bin");
  EXPECT_TRUE(store.ok()) << store.status().to_string();
  if (!built.ok() || !store.ok()) return nullptr;
  return std::make_unique<index::PayloadStore>(std::move(store).value());
}

}  // namespace privsearch::testing
