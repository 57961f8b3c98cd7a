#include "index/build.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "index/artifacts/artifacts.h"
#include "index/artifacts/client_files.h"
#include "index/artifacts/exact_store.h"
#include "index/artifacts/payload_store.h"
#include "index/candidates/ivf.h"
#include "index/candidates/pq_scan.h"
#include "index/encoders/lexical_encoder.h"
#include "testing/test_util.h"
#include "testing/tiny_collection.h"

namespace privsearch::index {
namespace {

namespace fs = std::filesystem;

using testing::Collection;

TEST(BuildIndex, BuildsVerifiableArtifactsThatSearch) {
  Collection c;
  BuildOptions o;
  o.collection = c.dir;
  o.doc_vectors = c.dir / "vectors.npy";
  o.out = c.dir / "index";
  o.dim = 16;
  o.pq_m = 4;
  o.record_bytes = 256;
  std::vector<std::string> steps;
  const auto man = build_index(o, [&](const std::string& s) { steps.push_back(s); });
  ASSERT_TRUE(man.ok()) << man.status().to_string();
  EXPECT_GE(steps.size(), 5u);
  const auto loaded = *load_manifest(o.out);
  EXPECT_EQ(loaded.version_id, man->version_id);
  EXPECT_EQ(loaded.documents, 400u);
  const auto proj = *load_projection(o.out / "projection.bin");
  const auto pq = *load_pq(o.out / "pq.bin");
  const auto store = *ExactStore::open(o.out / "exact.store");
  const auto payloads = *PayloadStore::open(o.out / "payloads.bin");
  EXPECT_EQ(store.rows(), 400u);
  EXPECT_EQ(store.cols(), 16u);
  EXPECT_EQ(*payloads.text(7), "Title 7\n\ntext of document 7");
  // A document's own (query-side) projection finds it among the PQ top 10 most of the time.
  const auto scanner = *PqScanner::create(pq);
  std::size_t found = 0;
  for (std::size_t i = 0; i < 400; i += 20) {
    const std::vector<float> q(c.vectors.row(i), c.vectors.row(i) + 32);
    const auto z = proj.project_query(q);
    const auto cand = *scanner.search(z, 10);
    found +=
        std::find(cand.begin(), cand.end(), static_cast<std::uint32_t>(i)) != cand.end() ? 1 : 0;
  }
  EXPECT_GE(found, 10u);
}

TEST(BuildIndex, MismatchedVectorsFailWithoutAManifest) {
  Collection c;
  Matrix fewer = c.vectors;
  fewer.rows = 399;
  fewer.data.resize(399 * 32);
  ASSERT_TRUE(save_npy(c.dir / "fewer.npy", fewer).ok());
  BuildOptions o;
  o.collection = c.dir;
  o.doc_vectors = c.dir / "fewer.npy";
  o.out = c.dir / "index2";
  o.dim = 16;
  const auto r = build_index(o, nullptr);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(o.out / "manifest.json"));
}

TEST(Artifacts, TruncatedFilesAreRejected) {
  Collection c;
  BuildOptions o;
  o.collection = c.dir;
  o.doc_vectors = c.dir / "vectors.npy";
  o.out = c.dir / "index3";
  o.dim = 16;
  o.pq_m = 4;
  ASSERT_TRUE(build_index(o, nullptr).ok());
  fs::resize_file(o.out / "pq.bin", fs::file_size(o.out / "pq.bin") - 1);
  EXPECT_EQ(load_pq(o.out / "pq.bin").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(load_manifest(o.out).status().code(), StatusCode::kDataLoss);
  fs::resize_file(o.out / "projection.bin", 40);
  EXPECT_EQ(load_projection(o.out / "projection.bin").status().code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace privsearch::index

namespace privsearch::index {
namespace {

TEST(BuildIndex, BuiltInEncoderIsSavedAsAnArtifact) {
  testing::Collection c("build-encoder");
  BuildOptions o;
  o.collection = c.dir;  // no doc_vectors: the built-in lexical encoder
  o.out = c.dir / "index";
  o.dim = 16;
  o.pq_m = 4;
  o.record_bytes = 256;
  const auto man = build_index(o, nullptr);
  ASSERT_TRUE(man.ok()) << man.status().to_string();
  ASSERT_NE(man->find("encoder"), nullptr);
  EXPECT_EQ(man->encoder_id.rfind("lexical-jl-v1/", 0), 0u) << man->encoder_id;
  const auto loaded = *load_manifest(o.out);  // re-hashes encoder.bin too
  const auto enc = *LexicalEncoder::load(o.out / loaded.find("encoder")->file);
  EXPECT_EQ(enc.id(), man->encoder_id);
  o.encoder = "word2vec";
  o.out = c.dir / "index2";
  EXPECT_EQ(build_index(o, nullptr).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(o.out / "manifest.json"));
}

}  // namespace
}  // namespace privsearch::index

namespace privsearch::index {
namespace {

// The IVF lists are built on request (and by default only for large collections), and a
// client's copy of an index holds what it asks for, verified, and never the private files.
TEST(BuildIndex, IvfListsOnRequestAndClientFilesCopyOnlyPublicVerifiedArtifacts) {
  testing::Collection c("build-ivf");
  auto o = testing::tiny_index_options(c, 128);
  const auto flat_only = *build_index(o, nullptr);  // 400 documents: below the default size
  EXPECT_EQ(flat_only.find(kIvfArtifact), nullptr);
  o.ivf = true;
  o.ivf_lists = 5;
  o.ivf_spill = 2;
  const auto m = *build_index(o, nullptr);
  ASSERT_NE(m.find(kIvfArtifact), nullptr);
  ASSERT_NE(m.find(kIvfListsArtifact), nullptr);
  const auto ivf = *load_ivf(o.out / kIvfFile);
  EXPECT_EQ(ivf.lists, 5u);
  EXPECT_EQ(ivf.spill, 2u);
  EXPECT_EQ(ivf.route_dim, 16u);  // the default, capped at d'

  const auto out = c.dir / "client";
  const auto bytes = copy_client_files(o.out, out, {"projection", kIvfArtifact});
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  for (const char* f : {"manifest.json", "projection.bin", kIvfFile}) {
    EXPECT_TRUE(std::filesystem::exists(out / f)) << f;
  }
  for (const char* f : {"exact.store", "pq.bin", kIvfListsFile, "payloads.bin"}) {
    EXPECT_FALSE(std::filesystem::exists(out / f)) << f;
  }
  EXPECT_TRUE(load_manifest(out, /*verify=*/false).ok());
  EXPECT_TRUE(verify_artifacts(out, m, {"projection", kIvfArtifact}).ok());
  EXPECT_EQ(copy_client_files(o.out, c.dir / "x", {"no_such"}).status().code(),
            StatusCode::kNotFound);
  // A damaged artifact is not copied (and nothing is written).
  {
    std::fstream f(o.out / kIvfFile, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);
    f.put('\x7f');
  }
  EXPECT_EQ(copy_client_files(o.out, c.dir / "y", {"projection", kIvfArtifact}).status().code(),
            StatusCode::kDataLoss);
  EXPECT_FALSE(std::filesystem::exists(c.dir / "y"));
}

}  // namespace
}  // namespace privsearch::index
