// The IVF-partitioned public index (index/candidates/ivf.h) and the segment scan it runs on
// (index/candidates/pq_scan.h): against the flat reference scan, brute-force assignment, and every
// refusal of its two file formats.
#include "index/candidates/ivf.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/bytes.h"
#include "core/csprng.h"
#include "index/artifacts/atomic_file.h"
#include "index/candidates/pq.h"
#include "index/candidates/pq_scan.h"
#include "index/candidates/route_kernel.h"
#include "index/ivf_test_util.h"
#include "testing/test_util.h"

namespace privsearch::index {
namespace {

namespace fs = std::filesystem;

using test_util::blobs;
using test_util::code_segments;
using test_util::random_query;
using test_util::reference_subset;

TEST(Ivf, HalfPrecisionRoundingKnownAnswers) {
  EXPECT_EQ(round_to_half(1.0f), 1.0f);
  EXPECT_EQ(round_to_half(0.1f), 0.0999755859375f);
  EXPECT_EQ(round_to_half(1.0f / 3), 0.333251953125f);
  EXPECT_EQ(round_to_half(-2.5f), -2.5f);
  EXPECT_EQ(round_to_half(65504.0f), 65504.0f);
  EXPECT_EQ(round_to_half(1.0f + 1.0f / 4096), 1.0f);  // ties to even
}

// One small IVF index (3,000 documents in 24 lists, routed on 32 of 48 coordinates, no spill),
// built once for the suite; tests that damage files work on copies.
class IvfBuilt : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = testing::temp_dir("ivf");
    x_ = blobs(3000, 48, 20, 43);
    PqOptions o;
    o.m = 12;
    pq_ = *build_pq(x_, o);
    IvfOptions io;
    io.lists = 24;
    io.route_dim = 32;
    io.spill = 1;  // one list per document (spilling has its own test)
    const auto entries = build_ivf(x_, pq_, io, dir_);
    ASSERT_TRUE(entries.ok()) << entries.status().message();
    ASSERT_EQ(entries->size(), 2u);
    ivf_ = *load_ivf(dir_ / kIvfFile);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static std::string segment_bytes(std::uint32_t list) {
    const auto all = *read_file_bytes(dir_ / kIvfListsFile);
    const auto& ref = ivf_.directory[list];
    return std::string(reinterpret_cast<const char*>(all.data()) + ref.offset, ref.bytes);
  }
  static std::vector<IvfList> all_lists() {
    std::vector<IvfList> lists;
    for (std::uint32_t l = 0; l < ivf_.lists; ++l) {
      lists.push_back(*decode_list(ivf_, l, byte_view(segment_bytes(l))));
    }
    return lists;
  }

  static inline fs::path dir_;
  static inline Matrix x_;
  static inline PqArtifact pq_;
  static inline IvfIndex ivf_;
};

TEST_F(IvfBuilt, EveryDocumentIsInTheListOfItsBestCentroid) {
  EXPECT_EQ(ivf_.lists, 24u);
  EXPECT_EQ(ivf_.route_dim, 32u);
  EXPECT_EQ(ivf_.documents, 3000u);
  EXPECT_EQ(ivf_.codebook.centroids, pq_.codebook.centroids);
  std::vector<int> seen(3000, 0);
  for (const auto& list : all_lists()) {
    for (std::size_t i = 0; i < list.count; ++i) {
      const std::uint32_t d = list.ids[i];
      ++seen[d];
      // Brute force over the (binary16) centroids on the route prefix.
      float best = -INFINITY;
      std::uint32_t arg = 0;
      for (std::uint32_t l = 0; l < ivf_.lists; ++l) {
        float s = 0;
        for (std::size_t j = 0; j < 32; ++j) s += x_.row(d)[j] * ivf_.centroids[l * 32 + j];
        if (s > best) {
          best = s;
          arg = l;
        }
      }
      EXPECT_NEAR(
          float(0),
          [&] {
            float mine = 0;
            for (std::size_t j = 0; j < 32; ++j)
              mine += x_.row(d)[j] * ivf_.centroids[list.list * 32 + j];
            return best - mine;
          }(),
          1e-4f)
          << "document " << d << " in list " << list.list << ", best " << arg;
      // Codes are the flat artifact's (block layout).
      for (std::size_t j = 0; j < 12; ++j) {
        ASSERT_EQ(list.blocked[(i / 64) * 12 * 64 + j * 64 + i % 64],
                  pq_.codes[std::size_t{d} * 12 + j]);
      }
    }
  }
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
  for (const float c : ivf_.centroids) EXPECT_EQ(c, round_to_half(c));
}

TEST_F(IvfBuilt, ProbingEveryListIsTheFlatScanAndFewerListsItsRestriction) {
  const auto lists = all_lists();
  Prng p = testing::test_prng(44);
  for (int trial = 0; trial < 6; ++trial) {
    const auto q = random_query(p, 48);
    const auto order = route_query(ivf_, q, ivf_.lists);
    ASSERT_EQ(order.size(), ivf_.lists);
    std::vector<const IvfList*> probed;
    for (const auto l : order) probed.push_back(&lists[l]);
    EXPECT_EQ(*ivf_search(ivf_, probed, q, 100), *pq_search(pq_, q, 100));
    // The best 4 lists: the reference restricted to their documents.
    probed.resize(4);
    std::vector<std::uint32_t> ids;
    for (const auto* l : probed) ids.insert(ids.end(), l->ids.begin(), l->ids.end());
    std::sort(ids.begin(), ids.end());
    EXPECT_EQ(*ivf_search(ivf_, probed, q, 10), reference_subset(pq_, ids, q, 10));
  }
}

TEST_F(IvfBuilt, RoutingIsBestFirstWithTiesToTheSmallerList) {
  Prng p = testing::test_prng(45);
  const auto q = random_query(p, 48);
  const auto order = route_query(ivf_, q, 5);
  ASSERT_EQ(order.size(), 5u);
  auto score = [&](std::uint32_t l) {
    double s = 0;
    for (std::size_t j = 0; j < 32; ++j)
      s += static_cast<double>(q[j]) * ivf_.centroids[l * 32 + j];
    return s;
  };
  // (Float rounding in the kernel's summation order: orders within 1e-5 are ties.)
  for (std::size_t i = 1; i < order.size(); ++i)
    EXPECT_GE(score(order[i - 1]) + 1e-5, score(order[i]));
  for (std::uint32_t l = 0; l < ivf_.lists; ++l) {
    if (std::find(order.begin(), order.end(), l) == order.end()) {
      EXPECT_LE(score(l), score(order.back()) + 1e-5);
    }
  }
  // A zero query scores every list 0: the first lists win.
  EXPECT_EQ(route_query(ivf_, std::vector<float>(48, 0.f), 3),
            (std::vector<std::uint32_t>{0, 1, 2}));
  EXPECT_EQ(route_query(ivf_, q, 1000).size(), ivf_.lists);
  EXPECT_TRUE(route_query(ivf_, std::vector<float>(8, 0.f), 3).empty());
}

TEST_F(IvfBuilt, DamagedSegmentsAreRefusedByName) {
  const std::uint32_t l = 3;
  auto good = segment_bytes(l);
  ASSERT_TRUE(decode_list(ivf_, l, byte_view(good)).ok());
  auto flipped = good;
  flipped[flipped.size() / 2] ^= 1;
  EXPECT_EQ(decode_list(ivf_, l, byte_view(flipped)).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(decode_list(ivf_, l, byte_view(good.substr(0, good.size() - 1))).status().code(),
            StatusCode::kDataLoss);
  // Another list's (valid) segment in this list's place.
  EXPECT_EQ(decode_list(ivf_, 4, byte_view(good)).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(decode_list(ivf_, 24, byte_view(good)).status().code(), StatusCode::kOutOfRange);
  // A segment whose hash the directory names but whose header lies (a directory forged along
  // with it): refused by the header check.
  IvfIndex forged = ivf_;
  auto renamed = good;
  renamed[8] ^= 1;  // list number
  forged.directory[l].sha256 = sha256(byte_view(renamed));
  const auto status = decode_list(forged, l, byte_view(renamed)).status();
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_NE(status.message().find("header"), std::string::npos) << status.message();
}

TEST_F(IvfBuilt, DamagedDirectoryFilesAreRefused) {
  const auto bytes = *read_file_bytes(dir_ / kIvfFile);
  const auto write = [&](const std::vector<std::uint8_t>& b) {
    ASSERT_TRUE(write_bytes_atomically(dir_ / "bad.bin", b).ok());
  };
  auto cut = bytes;
  cut.pop_back();
  write(cut);
  EXPECT_EQ(load_ivf(dir_ / "bad.bin").status().code(), StatusCode::kDataLoss);
  auto magic = bytes;
  magic[0] = 'X';
  write(magic);
  EXPECT_EQ(load_ivf(dir_ / "bad.bin").status().code(), StatusCode::kDataLoss);
  // The first directory entry's count (after the header, codebook and centroids).
  const std::size_t dir_start = 8 + 8 + 4 * 4 + 8 + 8 + 12 * 256 * 4 * 4 + 24 * 32 * 2;
  auto count = bytes;
  count[dir_start + 16] ^= 1;
  write(count);
  const auto s = load_ivf(dir_ / "bad.bin").status();
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("list 0"), std::string::npos) << s.message();
  auto lists = bytes;
  lists[8 + 8] = 0xff;  // 255 + ... lists: the sizes no longer match
  write(lists);
  EXPECT_EQ(load_ivf(dir_ / "bad.bin").status().code(), StatusCode::kDataLoss);
}

TEST_F(IvfBuilt, TheProviderStoreServesVerifiedSegmentsOnly) {
  const auto served = dir_ / "served.bin";
  fs::copy_file(dir_ / kIvfListsFile, served, fs::copy_options::overwrite_existing);
  auto store = *IvfListStore::open(served, ivf_);
  EXPECT_EQ(*store.segment(5), segment_bytes(5));
  EXPECT_EQ(store.segment(24).status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(*store.segment(5), segment_bytes(5));  // again
  // A store opened beside it reuses its fingerprints (same file, same directory entries).
  auto reopened = *IvfListStore::open(served, ivf_, &store);
  EXPECT_EQ(*reopened.segment(7), segment_bytes(7));
  // Changed in place after the load: refused, never served, whether the segment was served
  // before or not (its fingerprint, recorded from the verified bytes at open, differs).
  for (const std::uint32_t list : {5u, 6u}) {
    const auto& ref = ivf_.directory[list];
    std::fstream f(served, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(ref.offset + ref.bytes - 1));
    f.put('\x7f');
  }
  for (int again = 0; again < 2; ++again) {
    EXPECT_EQ(store.segment(5).status().code(), StatusCode::kDataLoss);
    EXPECT_EQ(store.segment(6).status().code(), StatusCode::kDataLoss);
  }
  EXPECT_EQ(reopened.segment(6).status().code(), StatusCode::kDataLoss);
  EXPECT_TRUE(store.segment(4).ok());
  // Opened afresh on the changed file: every segment is checked, the first damaged one named.
  const auto fresh = IvfListStore::open(served, ivf_);
  ASSERT_EQ(fresh.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(fresh.status().message().find("list 5"), std::string::npos) << fresh.status().message();
  // Cut off: the last list can no longer be read.
  fs::resize_file(served, ivf_.lists_file_bytes - 10);
  EXPECT_EQ(store.segment(23).status().code(), StatusCode::kDataLoss);
  // A file of the wrong size is refused at open.
  EXPECT_EQ(IvfListStore::open(served, ivf_).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(IvfListStore::open(dir_ / "missing.bin", ivf_).status().code(),
            StatusCode::kUnavailable);
}

TEST_F(IvfBuilt, SpilledDocumentsAreBalancedAndFoundOnce) {
  const auto dir = testing::temp_dir("ivf-spill");
  IvfOptions io;
  io.lists = 24;
  io.route_dim = 32;
  io.spill = 2;
  ASSERT_TRUE(build_ivf(x_, pq_, io, dir).ok());
  const auto spilled = *load_ivf(dir / kIvfFile);
  EXPECT_EQ(spilled.spill, 2u);
  EXPECT_EQ(spilled.centroids, ivf_.centroids);  // same training, same centroids
  const auto all = *read_file_bytes(dir / kIvfListsFile);
  std::vector<IvfList> lists;
  std::vector<std::vector<std::uint32_t>> in(3000);
  for (std::uint32_t l = 0; l < spilled.lists; ++l) {
    const auto& ref = spilled.directory[l];
    lists.push_back(*decode_list(spilled, l, std::span(all).subspan(ref.offset, ref.bytes)));
    for (const auto d : lists.back().ids) in[d].push_back(l);
  }
  std::vector<std::size_t> counts(spilled.lists);
  for (std::uint32_t l = 0; l < spilled.lists; ++l) counts[l] = lists[l].count;
  // Every document in its best list and its second copy balanced (ivf.h): 3,000 x 2 copies over
  // 24 lists, a cap of 256 entries.
  // The cap binds here (some second copies go below a better, full list): the checks see choices.
  EXPECT_GT(test_util::expect_balanced(x_, 32, spilled.centroids, 2, in, counts), 0u);
  Prng p = testing::test_prng(48);
  for (int trial = 0; trial < 6; ++trial) {
    const auto q = random_query(p, 48);
    std::vector<const IvfList*> probed;
    for (const auto l : route_query(spilled, q, spilled.lists)) probed.push_back(&lists[l]);
    EXPECT_EQ(*ivf_search(spilled, probed, q, 100), *pq_search(pq_, q, 100));
    probed.resize(3);
    std::set<std::uint32_t> union_ids;
    for (const auto* l : probed) union_ids.insert(l->ids.begin(), l->ids.end());
    const std::vector<std::uint32_t> ids(union_ids.begin(), union_ids.end());
    EXPECT_EQ(*ivf_search(spilled, probed, q, 50), reference_subset(pq_, ids, q, 50));
  }
  fs::remove_all(dir);
}

TEST_F(IvfBuilt, ListsMayCarryACoarserPqOfTheirOwn) {
  const auto dir = testing::temp_dir("ivf-own-pq");
  IvfOptions io;
  io.lists = 24;
  io.pq_m = 4;
  ASSERT_TRUE(build_ivf(x_, pq_, io, dir).ok());
  const auto coarse = *load_ivf(dir / kIvfFile);
  EXPECT_EQ(coarse.codebook.m, 4u);
  PqOptions po;
  po.m = 4;
  const auto reference = *build_pq(x_, po);  // the same seeded training
  EXPECT_EQ(coarse.codebook.centroids, reference.codebook.centroids);
  const auto all = *read_file_bytes(dir / kIvfListsFile);
  std::vector<IvfList> lists;
  std::vector<const IvfList*> views;
  for (std::uint32_t l = 0; l < coarse.lists; ++l) {
    const auto& ref = coarse.directory[l];
    lists.push_back(*decode_list(coarse, l, std::span(all).subspan(ref.offset, ref.bytes)));
  }
  for (const auto& l : lists) views.push_back(&l);
  Prng p = testing::test_prng(49);
  const auto q = random_query(p, 48);
  EXPECT_EQ(*ivf_search(coarse, views, q, 30), *pq_search(reference, q, 30));
  EXPECT_LT(coarse.lists_file_bytes, ivf_.lists_file_bytes);
  fs::remove_all(dir);
}

TEST(Ivf, BuildRefusesImpossibleShapes) {
  const auto x = blobs(300, 16, 3, 46);
  PqOptions o;
  o.m = 4;
  const auto pq = *build_pq(x, o);
  const auto dir = testing::temp_dir("ivf_bad");
  IvfOptions io;
  io.lists = 301;
  EXPECT_EQ(build_ivf(x, pq, io, dir).status().code(), StatusCode::kInvalidArgument);
  io.lists = 4;
  io.route_dim = 17;
  EXPECT_EQ(build_ivf(x, pq, io, dir).status().code(), StatusCode::kInvalidArgument);
  io.route_dim = 0;
  io.spill = 0;
  EXPECT_EQ(build_ivf(x, pq, io, dir).status().code(), StatusCode::kInvalidArgument);
  io.spill = 5;  // more than the 4 lists
  EXPECT_EQ(build_ivf(x, pq, io, dir).status().code(), StatusCode::kInvalidArgument);
  io.spill = 1;
  io.pq_m = 3;  // does not divide d' = 16
  EXPECT_EQ(build_ivf(x, pq, io, dir).status().code(), StatusCode::kInvalidArgument);
  io.pq_m = 0;
  const auto other = blobs(299, 16, 3, 47);
  EXPECT_EQ(build_ivf(other, pq, io, dir).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(default_ivf_lists(10'000'000), 40000u);
  EXPECT_EQ(default_ivf_lists(1'000'000), 4000u);
  EXPECT_EQ(default_ivf_lists(1), 1u);
  fs::remove_all(dir);
}

namespace balance {

ListChoices choices_of(std::size_t choices, std::vector<std::uint32_t> lists,
                       std::vector<float> scores) {
  ListChoices c;
  c.choices = choices;
  c.rows = lists.size() / choices;
  c.lists = std::move(lists);
  c.scores = std::move(scores);
  return c;
}

// Hand-worked: 6 rows over 3 lists, spill 2. First choices: rows 0-3 in list 0, rows 4-5 in
// list 1; cap = max(block(ceil(6 x 2 / 3 x 1.02) = 5) = 64, block(4) = 64) = 64, so nothing is
// refused and every row keeps its two best lists.
TEST(IvfBalance, UnderTheCapEveryRowKeepsItsBestLists) {
  const auto c = choices_of(3, {0, 1, 2, 0, 2, 1, 0, 1, 2, 0, 1, 2, 1, 0, 2, 1, 2, 0},
                            {9, 5, 1, 9, 6, 2, 8, 7, 3, 7, 4, 1, 9, 8, 0, 9, 3, 2});
  const auto out = *balanced_assignment(c, 3, 2);
  EXPECT_EQ(out, (std::vector<std::uint32_t>{0, 1, 0, 2, 0, 1, 0, 1, 1, 0, 1, 2}));
  EXPECT_EQ(balanced_assignment(c, 3, 1)->size(), 6u);  // spill 1: the first choices
  EXPECT_EQ(*balanced_assignment(c, 3, 1), (std::vector<std::uint32_t>{0, 0, 0, 0, 1, 1}));
}

// 130 rows all preferring list 0 then list 1, spill 2, 3 lists: cap = max(block(ceil(260 / 3 x
// 1.02) = 89) = 128, block(130) = 192) = 192. Every row's primary is list 0 (130 <= 192); list 1
// takes 192 second copies at most: all 130 fit, best scores first.
TEST(IvfBalance, FirstChoicesAlwaysHoldAndRaiseTheCap) {
  std::vector<std::uint32_t> lists;
  std::vector<float> scores;
  for (int i = 0; i < 130; ++i) {
    lists.insert(lists.end(), {0, 1, 2});
    scores.insert(scores.end(), {1.0f, 0.5f + 0.001f * static_cast<float>(i), 0.0f});
  }
  const auto out = *balanced_assignment(choices_of(3, lists, scores), 3, 2);
  for (int i = 0; i < 130; ++i) {
    EXPECT_EQ(out[2 * i], 0u);
    EXPECT_EQ(out[2 * i + 1], 1u);
  }
}

// Second copies over the cap: 200 rows, first choices spread over lists 1-4 (50 each), every row's
// second choice list 0 with a score that grows with the row. cap = max(block(ceil(400 / 5 x 1.02)
// = 82) = 128, block(50) = 64) = 128: list 0 takes the 128 best-scoring rows (72..199 by score);
// the other 72 go to their third choice, list (first + 1) % 4 + 1, which has room.
TEST(IvfBalance, ACopyTheCapRefusesGoesToItsNextChoiceBestScoresFirst) {
  std::vector<std::uint32_t> lists;
  std::vector<float> scores;
  for (std::uint32_t i = 0; i < 200; ++i) {
    const std::uint32_t first = i % 4 + 1;
    lists.insert(lists.end(), {first, 0, first % 4 + 1});
    scores.insert(scores.end(), {2.0f, static_cast<float>(i) / 200.0f, 0.1f});
  }
  const auto out = *balanced_assignment(choices_of(3, lists, scores), 5, 2);
  std::vector<std::size_t> fill(5, 0);
  for (std::uint32_t i = 0; i < 200; ++i) {
    EXPECT_EQ(out[2 * i], i % 4 + 1);
    EXPECT_EQ(out[2 * i + 1], i >= 72 ? 0u : (i % 4 + 1) % 4 + 1) << i;
    ++fill[out[2 * i]];
    ++fill[out[2 * i + 1]];
  }
  EXPECT_EQ(fill[0], 128u);
}

// 256 rows over 4 lists, two choices each: rows 0-127 prefer list 0 then 1, rows 128-255 list 1
// then 0, the second choice's score growing with the row. cap = max(block(ceil(512 / 4 x 1.02) =
// 131) = 192, block(128) = 128) = 192: lists 0 and 1 each take the 64 best-scoring second copies;
// the other 128 copies, no choice having room, alternate over lists 2 and 3 (the emptiest that
// lacks the row, ties to the smaller), rows in order.
TEST(IvfBalance, LeftoversGoToTheEmptiestListThatLacksTheRow) {
  std::vector<std::uint32_t> lists;
  std::vector<float> scores;
  for (std::uint32_t i = 0; i < 256; ++i) {
    lists.insert(lists.end(), {i < 128 ? 0u : 1u, i < 128 ? 1u : 0u});
    scores.insert(scores.end(), {1.0f, static_cast<float>(i % 128) / 1000.0f});
  }
  const auto out = *balanced_assignment(choices_of(2, lists, scores), 4, 2);
  std::vector<std::size_t> fill(4, 0);
  for (const auto l : out) ++fill[l];
  EXPECT_EQ(fill, (std::vector<std::size_t>{192, 192, 64, 64}));
  std::uint32_t leftover = 0;
  for (std::uint32_t i = 0; i < 256; ++i) {
    if (i % 128 >= 64) {
      EXPECT_EQ(out[2 * i + 1], i < 128 ? 1u : 0u) << i;
    } else {
      EXPECT_EQ(out[2 * i + 1], 2 + leftover++ % 2) << i;
    }
  }
}

TEST(IvfBalance, RefusesImpossibleShapes) {
  const auto c = choices_of(2, {0, 1, 1, 0}, {1, 0, 1, 0});
  EXPECT_EQ(balanced_assignment(c, 2, 3).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(balanced_assignment(c, 2, 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(balanced_assignment(c, 1, 2).status().code(), StatusCode::kInvalidArgument);
  auto bad = c;
  bad.lists[1] = 7;  // past the lists
  EXPECT_EQ(balanced_assignment(bad, 2, 2).status().code(), StatusCode::kInvalidArgument);
  bad = c;
  bad.scores.pop_back();
  EXPECT_EQ(balanced_assignment(bad, 2, 2).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace balance

}  // namespace
}  // namespace privsearch::index
