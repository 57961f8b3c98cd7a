// BM25 on hand-made data, and on SciFact (about a second; skipped without
// ../shared/data): reproduces the published BM25 figure, which validates the loaders, the
// tokenizer and the nDCG computation end to end.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <numeric>

#include "eval/metrics.h"
#include "index/beir.h"
#include "index/text.h"

namespace privsearch::index {
namespace {

TEST(Tokenizer, LowercasesSplitsStemsAndDropsStopwords) {
  EXPECT_EQ(tokenize("The Proteins, binding-sites; and 2 Cells!"),
            (std::vector<std::string>{"protein", "bind", "site", "2", "cell"}));
}

TEST(Bm25, RanksTheMatchingDocumentFirst) {
  const std::vector<std::string> docs = {"cats chase mice", "dogs chase cats", "stock markets rise"};
  const auto m = Bm25Model::fit(docs);
  const auto q = m.query_vector("market rising");
  std::vector<double> s;
  for (std::size_t i = 0; i < docs.size(); ++i) s.push_back(Bm25Model::dot(q, m.document_vector(i)));
  EXPECT_GT(s[2], s[0]);
  EXPECT_GT(s[2], s[1]);
  EXPECT_EQ(s[0], 0.0);
  EXPECT_TRUE(m.query_vector("unknownword").empty());
}

TEST(Bm25, SciFactMatchesThePublishedBaseline) {
  const auto dir = std::filesystem::path(PRIVSEARCH_SHARED_DATA) / "scifact";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "shared data absent: " << dir;
  const auto c = *load_collection(dir);
  std::vector<std::string> texts;
  for (const auto& d : c.corpus) texts.push_back(d.title + " " + d.text);
  const auto m = Bm25Model::fit(texts);
  double total = 0;
  for (const auto& q : c.queries) {
    const auto qv = m.query_vector(q.text);
    std::vector<double> s(c.corpus.size());
    for (std::size_t i = 0; i < c.corpus.size(); ++i) s[i] = Bm25Model::dot(qv, m.document_vector(i));
    std::vector<std::size_t> idx(s.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::partial_sort(idx.begin(), idx.begin() + 10, idx.end(), [&](auto a, auto b) { return s[a] > s[b]; });
    std::vector<std::string> ranking;
    for (std::size_t i = 0; i < 10; ++i) ranking.push_back(c.corpus[idx[i]].id);
    total += eval::score_ranking(ranking, c.qrels.at(q.id)).ndcg_at_10;
  }
  const double ndcg = total / static_cast<double>(c.queries.size());
  std::printf("SciFact BM25 nDCG@10 = %.4f over %zu queries\n", ndcg, c.queries.size());
  EXPECT_NEAR(ndcg, 0.665, 0.03);  // BEIR 0.665; measured here 0.661 (TARGETS.md)
}

}  // namespace
}  // namespace privsearch::index
