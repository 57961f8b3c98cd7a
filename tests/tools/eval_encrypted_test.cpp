// `privsearch eval --encrypted` end to end on a small generated collection: index on disk, the
// provider as its own process over TLS, every judged query through the encrypted path; the
// decrypted ranking must equal the plaintext rerank (decision "equivalent", top-10 match 1).
#include "experiments/eval_encrypted.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "core/csprng.h"
#include "index/encoders/beir.h"
#include "testing/test_util.h"

namespace privsearch::tools {
namespace {

TEST(EvalEncrypted, SmallCollectionThroughAProviderProcess) {
  ::setenv("PRIVSEARCH_PROVIDER_BIN", PRIVSEARCH_PROVIDER_BIN, 1);
  const auto dir = std::filesystem::temp_directory_path() /
                   ("privsearch-eval-enc-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "data" / "qrels");
  Prng p = testing::test_prng(31);
  {
    std::ofstream corpus(dir / "data" / "corpus.jsonl");
    for (std::size_t i = 0; i < 300; ++i) {
      std::string text;
      for (int k = 0; k < 25; ++k) {
        text += "t" + std::to_string(i % 12) + "w" + std::to_string(p.uniform_below(20)) + " ";
      }
      corpus << R"({"_id": "d)" << i << R"(", "title": "doc )" << i << R"(", "text": ")" << text
             << "\"}\n";
    }
    std::ofstream queries(dir / "data" / "queries.jsonl");
    std::ofstream qrels(dir / "data" / "qrels" / "test.tsv");
    qrels << "query-id\tcorpus-id\tscore\n";
    for (std::size_t q = 0; q < 12; ++q) {
      queries << R"({"_id": "q)" << q << R"(", "text": "t)" << q << "w1 t" << q << "w2 t" << q
              << "w3\"}\n";
      qrels << "q" << q << "\td" << q << "\t1\n";
    }
  }
  auto collection = index::load_collection(dir / "data");
  ASSERT_TRUE(collection.ok()) << collection.status().to_string();
  EncryptedEvalOptions o;
  o.k = 20;
  o.dim = 32;
  o.resamples = 200;
  o.work_dir = dir / "work";
  o.per_query_jsonl = dir / "per_query.jsonl";
  auto r = run_encrypted_eval(*collection, dir / "data", o, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->queries, 12u);
  EXPECT_EQ(r->decision, "equivalent");
  EXPECT_DOUBLE_EQ(r->top10_order_match, 1.0);
  EXPECT_LT(r->max_abs_error, 1e-3);
  const auto j = r->to_json();
  EXPECT_EQ(j["decision"], "equivalent");
  EXPECT_LT(j["numerical"]["max_abs_error"].get<double>(), 1e-3);
  std::ifstream lines(o.per_query_jsonl);
  std::size_t count = 0;
  for (std::string line; std::getline(lines, line);) ++count;
  EXPECT_EQ(count, 12u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace privsearch::tools
