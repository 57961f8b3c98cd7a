// The streaming index build (index/build_streaming.h): its artifacts against the rows it was fed
// (projected, stored, encoded, assigned by brute force), resumption after an interruption, the
// refusals, and the pieces it is made of (ResumableFile, two-level k-means).
#include "index/build_streaming.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "core/csprng.h"
#include "index/artifacts/artifacts.h"
#include "index/artifacts/atomic_file.h"
#include "index/artifacts/exact_store.h"
#include "index/artifacts/payload_store.h"
#include "index/candidates/ivf.h"
#include "index/candidates/pq.h"
#include "index/ivf_test_util.h"
#include "testing/test_util.h"

namespace privsearch::index {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kCols = 32;

// Row i: one of 12 topic centres plus noise, from its own seeded stream (any row on demand).
void source_row(std::size_t i, float* out) {
  Prng centres = testing::test_prng(900 + i % 12);
  Prng noise = testing::test_prng(100000 + i);
  for (std::size_t j = 0; j < kCols; ++j) {
    out[j] =
        static_cast<float>(2 * testing::uniform_pm1(centres) + 0.4 * testing::uniform_pm1(noise));
  }
}

StreamingBuildOptions small_build(const fs::path& dir) {
  StreamingBuildOptions o;
  o.source.rows = 3000;
  o.source.cols = kCols;
  o.source.vectors = [](std::size_t first, std::size_t count, float* out) {
    for (std::size_t i = 0; i < count; ++i) source_row(first + i, out + i * kCols);
  };
  o.source.document = [](std::size_t i) {
    return Document{"doc" + std::to_string(i), "title " + std::to_string(i),
                    "text of " + std::to_string(i)};
  };
  o.out = dir;
  o.dim = 16;
  o.pq_m = 4;
  o.sample = 1000;
  o.record_bytes = 64;
  o.ivf_lists = 20;
  o.ivf_route_dim = 8;
  o.ivf_spill = 2;
  o.block_rows = 700;
  return o;
}

Matrix source_matrix(std::size_t rows) {
  Matrix m;
  m.rows = rows;
  m.cols = kCols;
  m.data.resize(rows * kCols);
  for (std::size_t i = 0; i < rows; ++i) source_row(i, m.data.data() + i * kCols);
  return m;
}

// Every artifact is what its definition says of the source rows.
void expect_artifacts_of_the_source(const fs::path& dir, const StreamingBuildOptions& o) {
  const auto manifest = load_manifest(dir);
  ASSERT_TRUE(manifest.ok()) << manifest.status().message();
  EXPECT_EQ(manifest->documents, o.source.rows);
  EXPECT_EQ(manifest->dim, 16u);
  EXPECT_FALSE(fs::exists(dir / ".build"));
  const auto proj = *load_projection(dir / "projection.bin");
  const auto store = *ExactStore::open(dir / "exact.store");
  const auto pq = *load_pq(dir / "pq.bin");
  const Matrix expected = proj.project_documents(source_matrix(o.source.rows));
  Matrix stored;
  stored.rows = store.rows();
  stored.cols = store.cols();
  stored.data.assign(store.row(0), store.row(0) + stored.rows * stored.cols);
  ASSERT_EQ(stored.rows, o.source.rows);
  const double tol = o.store_dtype == StoreDtype::kFloat16 ? 2e-3 : 1e-4;
  for (std::size_t i = 0; i < expected.data.size(); ++i) {
    ASSERT_NEAR(stored.data[i], expected.data[i], tol * std::max(1.0f, std::abs(expected.data[i])))
        << "value " << i;
  }
  if (o.store_dtype == StoreDtype::kFloat32) {
    EXPECT_EQ(pq.codes, *pq_encode(pq.codebook, stored));
  }
  const auto payloads = *PayloadStore::open(dir / "payloads.bin");
  ASSERT_EQ(payloads.records(), o.source.rows);
  EXPECT_EQ(*payloads.text(2999), "title 2999\n\ntext of 2999");
  if (!o.ivf) {
    EXPECT_EQ(manifest->find(kIvfArtifact), nullptr);
    return;
  }
  const auto ivf = *load_ivf(dir / kIvfFile);
  ASSERT_EQ(ivf.lists, 20u);
  ASSERT_EQ(ivf.route_dim, 8u);
  const auto lists_bytes = *read_file_bytes(dir / kIvfListsFile);
  std::vector<std::set<std::uint32_t>> lists_of(o.source.rows);
  for (std::uint32_t l = 0; l < ivf.lists; ++l) {
    const auto& ref = ivf.directory[l];
    const auto list = decode_list(ivf, l, std::span(lists_bytes).subspan(ref.offset, ref.bytes));
    ASSERT_TRUE(list.ok()) << list.status().message();
    for (std::size_t i = 0; i < list->count; ++i) {
      lists_of[list->ids[i]].insert(l);
      for (std::size_t j = 0; j < 4; ++j) {  // the flat artifact's codes, in block layout
        ASSERT_EQ(list->blocked[(i / 64) * 4 * 64 + j * 64 + i % 64],
                  pq.codes[list->ids[i] * 4 + j]);
      }
    }
  }
  // Each document in its best list and its second copy balanced (ivf.h), by brute force over
  // the binary16 centroids.
  Matrix prefix;
  prefix.rows = o.source.rows;
  prefix.cols = 8;
  for (std::size_t d = 0; d < o.source.rows; ++d) {
    prefix.data.insert(prefix.data.end(), stored.row(d), stored.row(d) + 8);
  }
  std::vector<std::vector<std::uint32_t>> in(o.source.rows);
  for (std::size_t d = 0; d < o.source.rows; ++d)
    in[d].assign(lists_of[d].begin(), lists_of[d].end());
  std::vector<std::size_t> counts(ivf.lists);
  for (std::uint32_t l = 0; l < ivf.lists; ++l) counts[l] = ivf.directory[l].count;
  test_util::expect_balanced(prefix, 8, ivf.centroids, 2, in, counts);
}

TEST(StreamingBuild, ArtifactsAreTheRowsProjectedStoredEncodedAndAssigned) {
  const auto dir = testing::temp_dir("stream_build");
  const auto o = small_build(dir);
  const auto man = build_index_streaming(o, {});
  ASSERT_TRUE(man.ok()) << man.status().message();
  EXPECT_NE(man->find(kIvfListsArtifact), nullptr);
  expect_artifacts_of_the_source(dir, o);
  fs::remove_all(dir);
}

TEST(StreamingBuild, ResumesAfterAnInterruptionWithoutRedoingDurableRows) {
  const auto dir = testing::temp_dir("stream_resume");
  auto o = small_build(dir);
  auto interrupted = o;
  interrupted.source.vectors = [&](std::size_t first, std::size_t count, float* out) {
    if (count > 1 && first >= 1400) throw std::runtime_error("killed");
    o.source.vectors(first, count, out);
  };
  EXPECT_THROW((void)build_index_streaming(interrupted, {}), std::runtime_error);
  EXPECT_FALSE(fs::exists(dir / "manifest.json"));
  EXPECT_FALSE(fs::exists(dir / "exact.store"));  // only the .partial, never the final name
  EXPECT_TRUE(fs::exists(dir / "exact.store.partial"));
  const auto checkpoint = *read_file_bytes(dir / ".build" / "progress.json");
  EXPECT_NE(std::string(checkpoint.begin(), checkpoint.end()).find("\"rows_done\":1400"),
            std::string::npos);

  // Another run with other settings is refused and leaves the checkpoint alone.
  auto other = o;
  other.ivf_spill = 1;
  EXPECT_EQ(build_index_streaming(other, {}).status().code(), StatusCode::kFailedPrecondition);

  std::size_t first_streamed = o.source.rows;
  auto resumed = o;
  resumed.source.vectors = [&](std::size_t first, std::size_t count, float* out) {
    if (count > 1) first_streamed = std::min(first_streamed, first);
    o.source.vectors(first, count, out);
  };
  std::vector<std::string> said;
  const auto man = build_index_streaming(resumed, [&](const std::string& s) { said.push_back(s); });
  ASSERT_TRUE(man.ok()) << man.status().message();
  EXPECT_EQ(first_streamed, 1400u);
  EXPECT_TRUE(std::any_of(said.begin(), said.end(), [](const auto& s) {
    return s.find("resuming after 1400") != std::string::npos;
  }));
  expect_artifacts_of_the_source(dir, o);
  fs::remove_all(dir);
}

TEST(StreamingBuild, Float16StoreWithoutLists) {
  const auto dir = testing::temp_dir("stream_f16");
  auto o = small_build(dir);
  o.ivf = false;
  o.store_dtype = StoreDtype::kFloat16;
  const auto man = build_index_streaming(o, {});
  ASSERT_TRUE(man.ok()) << man.status().message();
  EXPECT_EQ(man->dtype, "float16");
  expect_artifacts_of_the_source(dir, o);
  fs::remove_all(dir);
}

TEST(StreamingBuild, RefusesImpossibleSettings) {
  const auto dir = testing::temp_dir("stream_bad");
  auto o = small_build(dir);
  o.pq_m = 5;  // does not divide d' = 16
  EXPECT_EQ(build_index_streaming(o, {}).status().code(), StatusCode::kInvalidArgument);
  o = small_build(dir);
  o.ivf_lists = 3001;
  EXPECT_EQ(build_index_streaming(o, {}).status().code(), StatusCode::kInvalidArgument);
  o = small_build(dir);
  o.ivf_spill = 0;
  EXPECT_EQ(build_index_streaming(o, {}).status().code(), StatusCode::kInvalidArgument);
  o = small_build(dir);
  o.sample = 100;  // too few rows to train PQ
  EXPECT_EQ(build_index_streaming(o, {}).status().code(), StatusCode::kInvalidArgument);
  o = small_build(dir);
  o.source.document = nullptr;
  EXPECT_EQ(build_index_streaming(o, {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(dir / "manifest.json"));
  fs::remove_all(dir);
}

TEST(ResumableFile, KeepsTheCheckpointedPrefixAndAppearsOnlyWhenFinished) {
  const auto dir = testing::temp_dir("resumable");
  const auto path = dir / "data.bin";
  const std::vector<std::uint8_t> ten{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  {
    auto f = *ResumableFile::open(path, 0);
    ASSERT_TRUE(f.append(ten).ok());
    ASSERT_TRUE(f.sync().ok());
    EXPECT_EQ(f.size(), 10u);
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(ResumableFile::open(path, 11).status().code(), StatusCode::kDataLoss);
  {
    auto f = *ResumableFile::open(path, 4);  // bytes after the checkpoint are cut
    EXPECT_EQ(f.size(), 4u);
    ASSERT_TRUE(f.append(std::vector<std::uint8_t>{42}).ok());
    ASSERT_TRUE(f.finish().ok());
    EXPECT_FALSE(f.append(ten).ok());
  }
  EXPECT_EQ(*read_file_bytes(path), (std::vector<std::uint8_t>{0, 1, 2, 3, 42}));
  EXPECT_FALSE(fs::exists(ResumableFile::partial_path(path)));
  fs::remove_all(dir);
}

TEST(ExactStoreBlocks, Float16BlocksRefuseValuesOutOfRangeNamingTheRow) {
  Matrix m;
  m.rows = 2;
  m.cols = 2;
  m.data = {1.0f, 2.0f, 3.0f, 1e6f};
  const auto bad = ExactStore::encode_rows(m, StoreDtype::kFloat16, 40);
  ASSERT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("row 41"), std::string::npos);
  EXPECT_EQ(ExactStore::encode_rows(m, StoreDtype::kFloat32, 0)->size(), 16u);
  EXPECT_EQ(ExactStore::encode_header(7, 2, StoreDtype::kFloat16).size(), 64u);
}

TEST(Ivf, TwoLevelTrainingGivesEveryListACentroid) {
  const std::size_t lists = kTwoLevelMinLists, r = 8;
  Matrix sample;
  sample.rows = 3 * lists;
  sample.cols = r;
  sample.data.resize(sample.rows * r);
  Prng p = testing::test_prng(61);
  for (auto& v : sample.data) v = static_cast<float>(testing::uniform_pm1(p));
  IvfOptions io;
  io.iterations = 5;
  const auto centroids = train_ivf_centroids(sample, lists, r, io);
  ASSERT_TRUE(centroids.ok()) << centroids.status().message();
  ASSERT_EQ(centroids->size(), lists * r);
  for (const float c : *centroids) ASSERT_TRUE(std::isfinite(c));
  // The centroids spread over the sample: most lists are some point's best list.
  const auto best = *assign_to_lists(*centroids, r, 1, sample);
  const std::set<std::uint32_t> used(best.begin(), best.end());
  EXPECT_GT(used.size(), lists * 8 / 10);
  EXPECT_EQ(train_ivf_centroids(sample, sample.rows + 1, r, io).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace privsearch::index
