// A tiny BEIR collection on disk (400 documents unless told, 32-d vectors with low-rank
// structure) for index-building and provider-process tests. Removed with the object.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "index/build.h"
#include "index/vectors_io.h"
#include "testing/test_util.h"

namespace privsearch::testing {

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
      for (std::size_t c = 0; c < 32; ++c) {
        // Low-rank structure plus noise so the projection has something to find.
        vectors.data.push_back(static_cast<float>(std::sin(0.1 * double(i) * double(c % 5 + 1)) +
                                                  0.05 * uniform_pm1(p)));
      }
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

}  // namespace privsearch::testing
