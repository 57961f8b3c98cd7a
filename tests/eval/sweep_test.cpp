// The paper's sweeps on a generated collection: the seeded split and a small end-to-end run.
#include "eval/sweep.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "testing/topic_corpus.h"

namespace privsearch::eval {
namespace {

TEST(Sweep, SeededSplitIsDeterministicAndAboutAQuarter) {
  std::size_t val = 0;
  for (int i = 0; i < 4000; ++i) {
    const std::string id = "q" + std::to_string(i);
    EXPECT_EQ(is_validation_query(id, 1), is_validation_query(id, 1));
    val += is_validation_query(id, 1) ? 1 : 0;
  }
  EXPECT_GT(val, 900u);
  EXPECT_LT(val, 1100u);
  std::size_t moved = 0;
  for (int i = 0; i < 400; ++i) {
    const std::string id = "q" + std::to_string(i);
    moved += is_validation_query(id, 1) != is_validation_query(id, 2) ? 1 : 0;
  }
  EXPECT_GT(moved, 50u);  // another seed, another split
}

TEST(Sweep, SmallCollectionEndToEnd) {
  index::Collection c = testing::topic_corpus(21);
  for (std::size_t qi = 0; qi < 20; ++qi) {
    const std::string id = "q" + std::to_string(qi);
    c.queries.push_back(
        {id, "t" + std::to_string(qi % 10) + "w1 t" + std::to_string(qi % 10) + "w2"});
    c.qrels[id]["d" + std::to_string(qi % 10)] = 1;
  }
  SweepOptions o;
  o.dims = {16, 32};
  o.ks = {8, 16};
  auto r = run_sweep(c, o, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->dimension_curve.size(), 2u);
  EXPECT_EQ(r->m_sensitivity.size(), 4u);
  const double recall16 = r->k_sweep.at_k.at(16).candidate_recall_of_exact_top10.test;
  const double recall8 = r->k_sweep.at_k.at(8).candidate_recall_of_exact_top10.test;
  EXPECT_GE(recall16, recall8);  // more candidates cannot hold fewer of the exact top-10
  EXPECT_FALSE(r->control_gaussian.pq_m.has_value());
  // The JSON keeps the field names the report and scripts read.
  const auto j = r->to_json();
  EXPECT_EQ(j["dimension_curve"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["k_sweep"]["K=16"]["candidate_recall_of_exact_top10"]["test"].get<double>(),
                   recall16);
  EXPECT_TRUE(j["projection_controls"].contains("gaussian_orthoprojector"));
  EXPECT_FALSE(j["projection_controls"]["svd"].contains("pq_m"));
}

}  // namespace
}  // namespace privsearch::eval
