// Leakage estimators on constructed cases with known answers, and a small
// end-to-end audit on a generated collection (default test run).
#include "eval/leakage.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/csprng.h"
#include "eval/audit.h"
#include "eval/metrics.h"
#include "testing/test_util.h"
#include "testing/topic_corpus.h"

namespace privsearch::eval {
namespace {

TEST(Leakage, EstimatorsRecoverAQueryEqualToEveryRow) {
  const std::size_t k = 6, d = 5;
  const Vec q = unit({1, 2, 0, -1, 3});
  std::vector<double> rows;
  for (std::size_t r = 0; r < k; ++r) {
    for (double v : q) rows.push_back(v * static_cast<double>(r + 1));  // norms differ
  }
  EXPECT_NEAR(cosine(centroid_estimate(rows, k, d), q), 1.0, 1e-12);
  EXPECT_NEAR(cosine(log_rank_estimate(rows, k, d), q), 1.0, 1e-12);
}

TEST(Leakage, CandidateSetEqualToTheTrueTopKPointsToTheQuery) {
  // Random unit rows; the candidates are the true top-K of q in order.
  Prng p = testing::test_prng(3);
  const std::size_t n = 400, d = 16, k = 40;
  std::vector<double> all(n * d);
  for (auto& v : all) v = static_cast<double>(p.next_u64() >> 11) * 0x1p-53 - 0.5;
  const Vec q = unit(std::vector<double>(all.begin(), all.begin() + d));
  std::vector<std::pair<double, std::size_t>> s;
  for (std::size_t i = 0; i < n; ++i) {
    s.push_back({cosine(std::span(all).subspan(i * d, d), q), i});
  }
  std::sort(s.begin(), s.end(), std::greater<>());
  std::vector<double> rows;
  for (std::size_t r = 0; r < k; ++r) {
    rows.insert(rows.end(), all.begin() + static_cast<std::ptrdiff_t>(s[r].second * d),
                all.begin() + static_cast<std::ptrdiff_t>((s[r].second + 1) * d));
  }
  const double c_centroid = cosine(centroid_estimate(rows, k, d), q);
  const double c_logrank = cosine(log_rank_estimate(rows, k, d), q);
  const double c_ridge = cosine(ridge_rank_estimate(rows, k, d), q);
  EXPECT_GT(c_centroid, 0.8);
  EXPECT_GE(c_logrank, c_centroid - 1e-9);  // order information helps on a ranked list
  EXPECT_GT(c_ridge, 0.5);
}

TEST(Leakage, InverseNormalCdfAndCholesky) {
  EXPECT_NEAR(inverse_normal_cdf(0.5), 0.0, 1e-9);
  EXPECT_NEAR(inverse_normal_cdf(0.975), 1.959963985, 1e-7);
  EXPECT_NEAR(inverse_normal_cdf(0.001), -3.090232306, 1e-6);
  std::vector<double> a = {4, 2, 2, 3};  // SPD
  std::vector<double> b = {10, 9};       // x = (1.5, 2)
  ASSERT_TRUE(solve_spd(a, b, 2));
  EXPECT_NEAR(b[0], 1.5, 1e-12);
  EXPECT_NEAR(b[1], 2.0, 1e-12);
  std::vector<double> bad = {1, 2, 2, 1};  // indefinite
  std::vector<double> rhs = {1, 1};
  EXPECT_FALSE(solve_spd(bad, rhs, 2));
}

TEST(Leakage, AucAndTprOnKnownInputs) {
  EXPECT_DOUBLE_EQ(roc_auc(std::vector<double>{3, 4, 5}, std::vector<double>{0, 1}), 1.0);
  EXPECT_DOUBLE_EQ(roc_auc(std::vector<double>{0, 1}, std::vector<double>{3, 4}), 0.0);
  EXPECT_DOUBLE_EQ(roc_auc(std::vector<double>{1, 1}, std::vector<double>{1, 1}), 0.5);
  // pos {1, 3}, neg {2}: one of two pairs ordered correctly.
  EXPECT_DOUBLE_EQ(roc_auc(std::vector<double>{1, 3}, std::vector<double>{2}), 0.5);
  std::vector<double> neg(100);
  for (std::size_t i = 0; i < 100; ++i) neg[i] = static_cast<double>(i);  // 0..99
  // Threshold at FPR <= 1%: above 98 (only 99 may be exceeded... one negative above).
  EXPECT_DOUBLE_EQ(tpr_at_fpr(std::vector<double>{98.5, 100, 50}, neg, 0.01), 2.0 / 3.0);
}

TEST(Decision, PaperRuleOnKnownIntervals) {
  EXPECT_EQ(equivalence_decision({0, -0.001, 0.0015}, 0.002), "equivalent");
  EXPECT_EQ(equivalence_decision({0, 0, 0}, 0.002), "equivalent");
  EXPECT_EQ(equivalence_decision({0.01, -0.001, 0.02}, 0.002), "non-inferior");
  EXPECT_EQ(equivalence_decision({-0.01, -0.02, -0.005}, 0.002), "inferior");
  // Contains zero but wider than the margin: not evidence of anything.
  EXPECT_EQ(equivalence_decision({0, -0.01, 0.01}, 0.002), "inconclusive");
}

// 300 documents over 10 topics, 12 queries: the audit runs end to end and its figures are in
// range; the candidate sets of one query are linkable far above chance.
TEST(Audit, SmallCollectionEndToEnd) {
  index::Collection c = testing::topic_corpus(9);
  for (std::size_t qi = 0; qi < 12; ++qi) {
    const std::size_t topic = qi % 10;
    std::string text;
    for (int k = 0; k < 4; ++k) text += "t" + std::to_string(topic) + "w" + std::to_string(k) + " ";
    const std::string id = "q" + std::to_string(qi);
    c.queries.push_back({id, text});
    c.qrels[id]["d" + std::to_string(topic)] = 1;
  }
  AuditOptions o;
  o.dim = 32;
  o.ks = {8, 16};
  o.reconstruction_sample = 50;
  auto r = run_audit(c, o, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->pq_reconstruction.sample, 50u);
  const double lifted = r->pq_reconstruction.lifted.cosine.mean;
  EXPECT_GT(lifted, 0.0);
  EXPECT_LE(lifted, 1.0 + 1e-9);
  EXPECT_GT(r->link_auc_set, 0.8);
  EXPECT_LE(r->link_auc_set, 1.0);
  ASSERT_EQ(r->candidate_leakage.count(8), 1u);
  EXPECT_EQ(r->candidate_leakage.at(16).count("ridge_permuted"), 1u);
  // The JSON keeps the field names scripts read.
  const auto j = r->to_json();
  EXPECT_EQ(j["pq_reconstruction"]["sample"], 50);
  EXPECT_DOUBLE_EQ(j["pq_lifted_cosine_mean"].get<double>(), lifted);
  EXPECT_DOUBLE_EQ(j["link_auc_set"].get<double>(), r->link_auc_set);
  EXPECT_TRUE(j["candidate_leakage"].contains("K=8"));
  EXPECT_TRUE(j["candidate_leakage"]["K=16"].contains("ridge_permuted"));
  o.ks = {2};
  EXPECT_EQ(run_audit(c, o, nullptr).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace privsearch::eval
