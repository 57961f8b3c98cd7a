// Tests of the access-private scorer: masks used once across forks and threads, encrypted scores
// equal to plaintext integers, client query checks and cluster choice (scoring/).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <thread>

#include "scoring/answer.h"
#include "scoring/build.h"
#include "scoring/client/private_query.h"
#include "scoring/layout.h"
#include "scoring/scoring_test_util.h"

namespace privsearch::scoring {
namespace {

using test_util::clustered;
using test_util::test_options;

// fork(): masks prepared before a fork are the parent's too; the child drops them and makes its
// own, so parent and child never encrypt under one mask (its secret decides it: compared here).
TEST(PrivateScorer, AForkedChildNeverUsesTheParentsPreparedMasks) {
  const auto x = clustered(600, 16, 6, 23);
  auto a = build_scoring(x, test_options(), nullptr);
  ASSERT_TRUE(a.ok());
  auto scorer = PrivateScorer::create(&a->layout, &a->hint, true);
  ASSERT_TRUE(scorer.ok());
  Prng prng = Prng::create();
  ASSERT_TRUE(scorer->prepare(4, prng).ok());
  const std::vector<std::uint32_t> one{0};
  std::vector<float> z(x.row(1), x.row(1) + x.cols);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    auto p = scorer->encrypt(z, one, prng);
    const auto v =
        p.ok() ? p->masks[0].secret().values_mod_2_32() : std::span<const std::uint32_t>{};
    const auto n = ::write(fds[1], v.data(), v.size_bytes());
    ::_exit(p.ok() && n == static_cast<ssize_t>(v.size_bytes()) ? 0 : 1);
  }
  ::close(fds[1]);
  auto mine = scorer->encrypt(z, one, prng);
  ASSERT_TRUE(mine.ok());
  const auto ours = mine->masks[0].secret().values_mod_2_32();
  std::vector<std::uint32_t> theirs(ours.size());
  std::size_t have = 0;
  auto* bytes = reinterpret_cast<std::uint8_t*>(theirs.data());
  while (have < theirs.size() * 4) {
    const auto n = ::read(fds[0], bytes + have, theirs.size() * 4 - have);
    if (n <= 0) break;
    have += static_cast<std::size_t>(n);
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_EQ(have, theirs.size() * 4);
  EXPECT_NE(std::vector<std::uint32_t>(ours.begin(), ours.end()), theirs);
}

// One scorer, many threads (a Python client shared by threads): each mask is popped once (a
// mask used for two queries leaks their difference) and every decoded score is exact.
TEST(PrivateScorer, ConcurrentEncryptionsUseEveryMaskOnce) {
  const auto x = clustered(600, 16, 6, 21);
  auto a = build_scoring(x, test_options(), nullptr);
  ASSERT_TRUE(a.ok()) << a.status().message();
  auto scorer = PrivateScorer::create(&a->layout, &a->hint, true);
  ASSERT_TRUE(scorer.ok());
  Prng setup = Prng::from_seed(Seed{3});
  constexpr std::size_t kThreads = 6, kEach = 8, kM = 2;
  ASSERT_TRUE(scorer->prepare(kThreads * kEach * kM / 2, setup).ok());  // half prepared
  std::vector<std::vector<PendingScore>> pending(kThreads);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Prng own = Prng::create();
      for (std::size_t i = 0; i < kEach; ++i) {
        const std::vector<std::uint32_t> clusters{static_cast<std::uint32_t>(i % 2),
                                                  static_cast<std::uint32_t>(2 + t % 3)};
        std::vector<float> z(x.row(t * kEach + i), x.row(t * kEach + i) + x.cols);
        auto p = scorer->encrypt(z, clusters, own);
        if (p.ok()) pending[t].push_back(std::move(p).value());
      }
    });
  }
  for (auto& t : threads) t.join();
  std::set<std::vector<std::uint32_t>> secrets;
  std::size_t masks = 0;
  for (const auto& per_thread : pending) {
    ASSERT_EQ(per_thread.size(), kEach);
    for (const auto& p : per_thread) {
      for (const auto& m : p.masks) {
        const auto v = m.secret().values_mod_2_32();
        secrets.emplace(v.begin(), v.end());
        ++masks;
      }
    }
  }
  EXPECT_EQ(masks, kThreads * kEach * kM);
  EXPECT_EQ(secrets.size(), masks);  // every mask (its secret) used once
  // And every score decodes exactly.
  for (std::size_t t = 0; t < kThreads; ++t) {
    for (std::size_t i = 0; i < kEach; ++i) {
      auto& p = pending[t][i];
      const auto clusters = p.clusters;
      const auto answers = answer_private_queries(a->matrix, p.queries, clusters.size());
      auto got = scorer->decode(std::move(p), answers);
      ASSERT_TRUE(got.ok()) << got.status().message();
      std::vector<float> z(x.row(t * kEach + i), x.row(t * kEach + i) + x.cols);
      const auto u = quantize_query(a->layout, z);
      std::map<std::uint32_t, std::int64_t> want;
      for (std::uint32_t c : clusters) {
        for (const auto& d : plaintext_cluster_scores(a->layout, a->matrix, u, c)) {
          want[d.doc] = d.score;
        }
      }
      for (const auto& d : *got) EXPECT_EQ(d.score, want.at(d.doc)) << "doc " << d.doc;
    }
  }
}

// Encrypted scores of every cluster equal the plaintext integer scores, m = 1 and m = 3; the
// answers go through the provider's own switch and packing. Returns the largest |score| seen.
std::int64_t expect_exact(const index::Matrix& x, const ScoringBuildOptions& o, std::uint8_t seed) {
  std::int64_t largest = 0;
  auto a = build_scoring(x, o, nullptr);
  EXPECT_TRUE(a.ok()) << a.status().message();
  if (!a.ok()) return 0;
  auto scorer = PrivateScorer::create(&a->layout, &a->hint, true);
  EXPECT_TRUE(scorer.ok()) << scorer.status().message();
  if (!scorer.ok()) return 0;
  Prng prng = Prng::from_seed(Seed{seed});
  const auto& s = a->layout.shape;
  for (std::size_t m : {1u, 3u}) {
    for (std::uint32_t first = 0; first < s.clusters; first += static_cast<std::uint32_t>(m)) {
      std::vector<std::uint32_t> clusters;
      for (std::uint32_t c = first;
           c < std::min<std::uint32_t>(s.clusters, first + static_cast<std::uint32_t>(m)); ++c)
        clusters.push_back(c);
      const std::size_t q = prng.uniform_below(x.rows);
      std::vector<float> z(x.row(q), x.row(q) + x.cols);
      auto pending = scorer->encrypt(z, clusters, prng);
      EXPECT_TRUE(pending.ok()) << pending.status().message();
      if (!pending.ok()) return largest;
      EXPECT_EQ(pending->queries.size(), clusters.size() * s.stride());
      const auto answers = answer_private_queries(a->matrix, pending->queries, clusters.size());
      EXPECT_EQ(answers.size(),
                packed_answer_bytes(clusters.size() * s.cluster_rows, s.answer_bits));
      auto got = scorer->decode(std::move(*pending), answers);
      EXPECT_TRUE(got.ok()) << got.status().message();
      if (!got.ok()) return largest;
      const auto u = quantize_query(a->layout, z);
      std::map<std::uint32_t, std::int64_t> want;
      for (std::uint32_t c : clusters) {
        for (const auto& d : plaintext_cluster_scores(a->layout, a->matrix, u, c)) {
          want[d.doc] = d.score;
        }
      }
      EXPECT_EQ(got->size(), want.size());
      for (const auto& d : *got) {
        EXPECT_EQ(d.score, want.count(d.doc) ? want.at(d.doc) : -1) << "doc " << d.doc;
        largest = std::max(largest, d.score < 0 ? -d.score : d.score);
      }
      EXPECT_TRUE(std::is_sorted(got->begin(), got->end(),
                                 [](const auto& l, const auto& r) { return l.score > r.score; }));
    }
  }
  return largest;
}

TEST(ScoringExact, EncryptedScoresEqualPlaintextIntegersRandomData) {
  expect_exact(clustered(500, 20, 4, 2), test_options(), 3);
}

TEST(ScoringExact, EncryptedScoresEqualPlaintextIntegersStructuredData) {
  // Saturating entries (every coordinate equal and large), zero rows, and 8-bit documents with
  // 8-bit queries: the extremes of the score range, at the worst-case modulus (2^19: 16 x 128 x
  // 127 < 2^18) and at the default 2^14, where the query is scaled to the norm bound.
  index::Matrix x;
  x.rows = 300;
  x.cols = 16;
  x.data.resize(300 * 16);
  for (std::size_t i = 0; i < 300; ++i)
    for (std::size_t j = 0; j < 16; ++j)
      x.data[i * 16 + j] = i % 3 == 0 ? 0.0f : (i % 3 == 1 ? 1000.0f : -1000.0f * (j % 2 ? 1 : -1));
  auto o = test_options();
  o.doc_bits = 8;
  o.score_bits = 19;
  // Saturated documents against their own direction come within a few percent of 2^(log_p-1).
  EXPECT_GT(expect_exact(x, o, 4), std::int64_t{1} << 17);
  o.score_bits = 0;
  const std::int64_t largest = expect_exact(x, o, 14);
  EXPECT_GT(largest, std::int64_t{1} << 12);
  EXPECT_LT(largest, std::int64_t{1} << 13);
}

TEST(ScoringClient, QuantizedQueriesStayInsideTheNormBound) {
  // Property: for any query, N ||u|| <= 2^(log_p - 1) - 1 with N^2 the layout's bound, and the
  // largest coordinate stays within the query bits; a zero or non-finite query quantizes to 0.
  auto a = build_scoring(clustered(300, 16, 3, 15), test_options(), nullptr);
  ASSERT_TRUE(a.ok());
  auto layout = a->layout;
  Prng prng = Prng::from_seed(Seed{16});
  const double bound = std::ldexp(1.0, static_cast<int>(layout.shape.log_p) - 1) - 1;
  for (const std::uint64_t norm_sq :
       {std::uint64_t{1}, std::uint64_t{37}, layout.max_norm_sq, std::uint64_t{16} * 64}) {
    layout.max_norm_sq = norm_sq;
    for (int t = 0; t < 200; ++t) {
      std::vector<float> z(16);
      const double spread = std::ldexp(1.0, static_cast<int>(prng.uniform_below(20)) - 10);
      for (auto& v : z)
        v = static_cast<float>((static_cast<double>(prng.next_u64() >> 11) * 0x1p-53 - 0.5) *
                               spread);
      if (t % 7 == 0) z[t % 16] = 0;
      const auto u = quantize_query(layout, z);
      double u_sq = 0;
      for (std::int32_t v : u) {
        EXPECT_LE(std::abs(v), layout.shape.query_max());
        u_sq += double{1} * v * v;
      }
      EXPECT_LE(static_cast<double>(norm_sq) * u_sq, bound * bound) << norm_sq;
      // Not needlessly coarse: the largest coordinate is near the cap or the norm is near the
      // bound.
      const double max_u = std::abs(*std::max_element(
          u.begin(), u.end(), [](auto l, auto r) { return std::abs(l) < std::abs(r); }));
      EXPECT_TRUE(max_u >= layout.shape.query_max() - 1 ||
                  std::sqrt(static_cast<double>(norm_sq) * u_sq) >= 0.8 * bound)
          << norm_sq << " " << max_u;
    }
  }
  const std::vector<float> zero(16, 0.0f);
  const auto u0 = quantize_query(layout, zero);
  EXPECT_TRUE(std::all_of(u0.begin(), u0.end(), [](std::int32_t v) { return v == 0; }));
  std::vector<float> bad(16, 1.0f);
  bad[3] = std::numeric_limits<float>::infinity();
  const auto ub = quantize_query(layout, bad);
  EXPECT_TRUE(std::all_of(ub.begin(), ub.end(), [](std::int32_t v) { return v == 0; }));
}

TEST(ScoringExact, SecureParametersSmallShape) {
  auto o = test_options();
  o.lwe_params = "scoring-n2048-ternary";
  o.allow_insecure = false;
  expect_exact(clustered(150, 16, 3, 5), o, 6);
}

TEST(ScoringClient, RefusesMismatchesAndBadRequests) {
  auto a = build_scoring(clustered(200, 16, 2, 9), test_options(), nullptr);
  ASSERT_TRUE(a.ok());
  auto short_hint = a->hint;
  short_hint.rows -= 1;
  short_hint.values.resize(short_hint.rows * short_hint.n);
  EXPECT_EQ(PrivateScorer::create(&a->layout, &short_hint, true).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_FALSE(PrivateScorer::create(&a->layout, &a->hint, false).ok());  // insecure row
  auto scorer = PrivateScorer::create(&a->layout, &a->hint, true);
  ASSERT_TRUE(scorer.ok());
  Prng prng = Prng::from_seed(Seed{10});
  const std::vector<float> z(16, 1.0f);
  const std::uint32_t too_far[] = {a->layout.shape.clusters};
  EXPECT_EQ(scorer->encrypt(z, too_far, prng).status().code(), StatusCode::kOutOfRange);
  EXPECT_FALSE(scorer->encrypt(z, {}, prng).ok());
  const std::uint32_t one[] = {0};
  auto pending = scorer->encrypt(z, one, prng);
  ASSERT_TRUE(pending.ok());
  const std::string short_answer(
      packed_answer_bytes(a->layout.shape.cluster_rows, a->layout.shape.answer_bits) - 1, '\0');
  EXPECT_FALSE(scorer->decode(std::move(*pending), short_answer).ok());
}

TEST(ScoringClient, ChoosesTheBestCandidatesClustersThenVotesThenCentroids) {
  auto a = build_scoring(clustered(400, 16, 4, 11), test_options(), nullptr);
  ASSERT_TRUE(a.ok());
  const auto cluster_of = cluster_of_documents(a->layout);
  // Candidates: x (cluster X), y (Y), then w (W), then three of cluster V: the first two
  // clusters come in rank order (X, Y); then V's votes 1/log2(5) + 1/log2(6) + 1/log2(7) = 1.17
  // beat W's 1/log2(4) = 0.5.
  std::map<std::uint32_t, std::vector<std::uint32_t>> by_cluster;
  for (std::uint32_t d = 0; d < 400; ++d) by_cluster[cluster_of[d]].push_back(d);
  ASSERT_GE(by_cluster.size(), 4u);
  auto it = by_cluster.begin();
  const auto& xs = (it++)->second;
  const auto& ys = (it++)->second;
  const auto& ws = (it++)->second;
  const auto& vs = (it++)->second;
  ASSERT_GE(vs.size(), 3u);
  const std::uint32_t candidates[] = {xs[0], ys[0], ws[0], vs[0], vs[1], vs[2]};
  const std::vector<float> z(16, 0.5f);
  const auto table = clusters_of_documents(a->layout);
  const auto chosen = choose_clusters(a->layout, table, z, candidates, 4);
  ASSERT_EQ(chosen.size(), 4u);
  EXPECT_EQ(chosen[0], cluster_of[xs[0]]);
  EXPECT_EQ(chosen[1], cluster_of[ys[0]]);
  EXPECT_EQ(chosen[2], cluster_of[vs[0]]);
  EXPECT_EQ(chosen[3], cluster_of[ws[0]]);
  // m = 1: the best candidate's cluster; m larger than the number of clusters: all, once.
  EXPECT_EQ(choose_clusters(a->layout, table, z, candidates, 1),
            std::vector<std::uint32_t>{cluster_of[xs[0]]});
  EXPECT_EQ(choose_clusters(a->layout, table, z, {}, 1000).size(), a->layout.shape.clusters);
}

TEST(ScoringBuild, OverlapCopiesBoundaryDocumentsIntoASecondCluster) {
  const auto x = clustered(700, 24, 5, 12);
  auto o = test_options();
  o.overlap = 0.08;
  auto a = build_scoring(x, o, nullptr);
  ASSERT_TRUE(a.ok()) << a.status().message();
  const auto clusters_of = clusters_of_documents(a->layout);
  std::size_t copies = 0;
  for (const auto& c : clusters_of) {
    ASSERT_NE(c[0], kEmptySlot);
    if (c[1] != kEmptySlot) {
      ++copies;
      EXPECT_NE(c[0], c[1]);
    }
  }
  EXPECT_GT(copies, 0u);
  EXPECT_LE(copies, 56u);  // 0.08 x 700
  ASSERT_TRUE(parse_layout(serialize_layout(a->layout)).ok());
  // A third copy is refused.
  auto third = a->layout;
  std::uint32_t doc = 0;
  while (clusters_of[doc][1] == kEmptySlot) ++doc;
  for (std::size_t c = 0; c < third.shape.clusters; ++c) {
    if (c == clusters_of[doc][0] || c == clusters_of[doc][1]) continue;
    const auto it =
        std::find(third.slot_doc.begin() + c * third.shape.cluster_rows,
                  third.slot_doc.begin() + (c + 1) * third.shape.cluster_rows, kEmptySlot);
    if (it != third.slot_doc.begin() + (c + 1) * third.shape.cluster_rows) {
      *it = doc;
      break;
    }
  }
  EXPECT_FALSE(parse_layout(serialize_layout(third)).ok());
  // Decoding returns each document once, with its exact score.
  expect_exact(x, o, 13);
}

}  // namespace
}  // namespace privsearch::scoring
