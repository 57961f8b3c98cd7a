// End to end on a generated collection (default test run): encoder fit, SVD, PQ, the four
// ladder rungs and their bootstrap intervals.
#include "eval/ladder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/csprng.h"
#include "index/encoders/glove_encoder.h"
#include "index/encoders/word_vectors.h"
#include "testing/test_util.h"

namespace privsearch::eval {
namespace {

// 400 documents over 20 topics, each topic with its own 30-word vocabulary plus shared filler;
// each query is 4 words of one document's topic, relevant: that document (grade 2) and two
// others of the topic (grade 1).
index::Collection generated() {
  index::Collection c;
  Prng p = testing::test_prng(500);
  auto word = [](std::size_t topic, std::size_t w) {
    return "t" + std::to_string(topic) + "w" + std::to_string(w);
  };
  for (std::size_t i = 0; i < 400; ++i) {
    const std::size_t topic = i % 20;
    std::string text;
    for (int k = 0; k < 40; ++k) {
      text += (p.uniform_below(3) == 0 ? "filler" + std::to_string(p.uniform_below(50))
                                       : word(topic, p.uniform_below(30)));
      text += ' ';
    }
    c.corpus.push_back({"d" + std::to_string(i), "", text});
    c.doc_index.emplace("d" + std::to_string(i), i);
  }
  for (std::size_t qi = 0; qi < 60; ++qi) {
    const std::size_t doc = p.uniform_below(400), topic = doc % 20;
    std::string text;
    for (const auto& tok : {0, 1, 2, 3}) {
      (void)tok;
      text += word(topic, p.uniform_below(30)) + " ";
    }
    const std::string qid = "q" + std::to_string(qi);
    c.queries.push_back({qid, text});
    c.qrels[qid]["d" + std::to_string(doc)] = 2;
    c.qrels[qid]["d" + std::to_string((doc + 20) % 400)] = 1;
    c.qrels[qid]["d" + std::to_string((doc + 40) % 400)] = 1;
  }
  return c;
}

TEST(Ladder, RunsEveryRungWithIntervals) {
  const auto c = generated();
  LadderOptions o;
  o.dim = 64;
  o.pq_m = 8;
  o.k = 50;
  o.resamples = 500;
  const auto r = run_ladder(c, o, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->methods.size(), 4u);
  for (const auto& m : r->methods) {
    EXPECT_EQ(m.per_query.size(), 60u) << m.name;
    EXPECT_LE(m.ndcg_at_10.low, m.ndcg_at_10.mean) << m.name;
    EXPECT_GE(m.ndcg_at_10.high, m.ndcg_at_10.mean) << m.name;
    EXPECT_GT(m.ndcg_at_10.mean, 0.2) << m.name;  // topic words find topic documents
  }
  // Reranking the PQ candidates exactly cannot do worse than the PQ order by much, and stays
  // close to exact projected search (all relevant documents share the query's topic).
  EXPECT_GE(r->methods[3].ndcg_at_10.mean + 0.02, r->methods[2].ndcg_at_10.mean);
  EXPECT_LE(std::abs(r->rerank_minus_projected.mean), 0.05);
  const auto j = r->to_json();
  EXPECT_TRUE(j["methods"].contains("pq_rerank"));
  EXPECT_EQ(j["pq_m"], 8);
}

TEST(Ladder, EncoderChoicesAndTheirErrors) {
  const auto c = generated();
  LadderOptions o;
  o.dim = 8;
  o.resamples = 100;
  o.encoder = "nope";
  EXPECT_EQ(run_ladder(c, o, nullptr).status().code(), StatusCode::kInvalidArgument);
  o.encoder = "lexical+glove-sif:-1";
  EXPECT_EQ(run_ladder(c, o, nullptr).status().code(), StatusCode::kInvalidArgument);
  o.encoder = "glove-sif";
  o.word_vectors = std::filesystem::temp_directory_path() / "privsearch-no-such-vectors.pswv";
  const auto missing = run_ladder(c, o, nullptr);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("make glove"), std::string::npos);
  // A tiny vector file over the generated collection's words: the glove and combined
  // encoders run every rung.
  const auto vec = std::filesystem::temp_directory_path() / "privsearch-ladder-vectors.pswv";
  std::vector<std::string> words;
  std::vector<float> values;
  for (const auto& d : c.corpus) {
    for (const auto& w : index::tokenize_words(d.title + " " + d.text)) {
      if (std::find(words.begin(), words.end(), w) != words.end()) continue;
      words.push_back(w);
      for (int j = 0; j < 16; ++j)
        values.push_back(static_cast<float>(std::sin(double(words.size() * 31 + j))));
    }
  }
  ASSERT_TRUE(index::WordVectors(16, words, values).save(vec).ok());
  o.word_vectors = vec;
  for (const char* name : {"glove-idf", "glove-sif", "lexical+glove-sif:2"}) {
    o.encoder = name;
    const auto r = run_ladder(c, o, nullptr);
    ASSERT_TRUE(r.ok()) << name << ": " << r.status().to_string();
    EXPECT_EQ(r->methods.size(), 4u) << name;
  }
  std::filesystem::remove(vec);
}

TEST(Ladder, EmptyCollectionIsRejected) {
  index::Collection c;
  EXPECT_EQ(run_ladder(c, LadderOptions{}, nullptr).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace privsearch::eval
