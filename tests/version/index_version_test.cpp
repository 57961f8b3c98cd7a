// One index version opened once (version/index_version.h): the views merge every update
// generation exactly as the separate artifacts say (checked against the artifacts read one by
// one), the trust hook runs before any hash, each role hashes exactly what it reads, and a
// tampered, missing or mismatched artifact is refused by name.
#include "version/index_version.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "index/artifacts/append.h"
#include "index/artifacts/artifact_names.h"
#include "index/artifacts/artifacts.h"
#include "index/build.h"
#include "testing/test_util.h"
#include "testing/tiny_collection.h"

namespace privsearch::version {
namespace {

namespace fs = std::filesystem;

// 30 more documents like the collection's, ids from 400 on, and two deletions.
index::AppendInput more_documents() {
  auto in = testing::appended_documents(400, 30, 5);
  in.deleted = {3, 250};
  return in;
}

// Flips byte 40 (the last byte of a shorter file).
void flip_a_byte(const fs::path& file) {
  const auto at =
      static_cast<std::streamoff>(std::min<std::uintmax_t>(40, fs::file_size(file) - 1));
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(at);
  const char b = static_cast<char>(f.get());
  f.seekp(at);
  f.put(static_cast<char>(b ^ 1));
  ASSERT_TRUE(f.good()) << file;
}

class IndexVersionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    o = testing::tiny_index_options(c, 128);
    o.ivf = true;
    o.ivf_lists = 8;
    ASSERT_TRUE(index::build_index(o, nullptr).ok());
    ASSERT_TRUE(index::append_to_index(o.out, more_documents(), nullptr).ok());
  }
  Result<IndexVersion> open_as(Role role, CandidateIndex candidates = CandidateIndex::kAuto) {
    OpenSpec spec;
    spec.role = role;
    spec.candidates = candidates;
    return IndexVersion::open(o.out, spec);
  }
  testing::Collection c{"index-version"};
  index::BuildOptions o;
};

TEST_F(IndexVersionTest, ViewsMergeEveryGenerationAsTheArtifactsSay) {
  auto v = open_as(Role::kClient);
  ASSERT_TRUE(v.ok()) << v.status().to_string();
  EXPECT_EQ(v->generations(), 1u);
  EXPECT_EQ(v->candidates(), CandidateIndex::kFlat);
  EXPECT_EQ(v->deleted(), (std::vector<std::uint32_t>{3, 250}));
  EXPECT_EQ(v->manifest().documents, 430u);

  // The flat codes: the base's and the update's, in order, as the files hold them.
  const auto flat = v->flat_codes();
  ASSERT_TRUE(flat.ok()) << flat.status().to_string();
  ASSERT_EQ(flat->generations.size(), 2u);
  const auto base = *index::load_pq(*v->path_of(index::kPqArtifact));
  const auto added =
      *index::load_pq(*v->path_of(index::generation_artifact(index::kPqArtifact, 1)));
  EXPECT_EQ(flat->generations[0].codes, base.codes);
  EXPECT_EQ(flat->generations[1].codes, added.codes);
  EXPECT_EQ(flat->generations[1].count, 30u);

  // The payloads: 430 records, the deleted ones erased, the new ones readable.
  const auto payloads = v->payloads();
  ASSERT_TRUE(payloads.ok()) << payloads.status().to_string();
  EXPECT_EQ(payloads->records(), 430u);
  EXPECT_FALSE(payloads->text(3).ok() && !payloads->text(3)->empty());
  ASSERT_TRUE(payloads->text(405).ok());
  EXPECT_NE(payloads->text(405)->find("New 405"), std::string::npos);
  ASSERT_TRUE(payloads->text(4).ok());
  EXPECT_NE(payloads->text(4)->find("Title 4"), std::string::npos);

  // The IVF directory with the update's additions: every document in some list.
  const auto ivf = open_as(Role::kClient, CandidateIndex::kIvf);
  ASSERT_TRUE(ivf.ok()) << ivf.status().to_string();
  const auto lists = ivf->ivf();
  ASSERT_TRUE(lists.ok()) << lists.status().to_string();
  EXPECT_EQ(lists->delta_lists.size(), 1u);
  EXPECT_FALSE(lists->base_lists.empty());
  EXPECT_TRUE(ivf->projection().ok());
}

TEST_F(IndexVersionTest, TheTrustHookRunsFirstAndItsRefusalIsTheAnswer) {
  flip_a_byte(o.out / "pq.bin");  // would fail the hash check
  OpenSpec spec;
  bool saw_manifest = false;
  spec.check_trust = [&](const fs::path& dir, const index::Manifest& man) {
    saw_manifest = dir == o.out && man.documents == 430;
    return Status(StatusCode::kUnauthenticated, "not the pinned operator");
  };
  const auto v = IndexVersion::open(o.out, spec);
  ASSERT_FALSE(v.ok());
  EXPECT_TRUE(saw_manifest);
  EXPECT_EQ(v.status().code(), StatusCode::kUnauthenticated) << v.status().to_string();
}

// A client hashes what it reads; a provider everything it serves, and on a reload not the
// client artifacts the served version verified under the same hash.
TEST_F(IndexVersionTest, EachRoleHashesWhatItReads) {
  const auto first = open_as(Role::kProvider);
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  flip_a_byte(o.out / "pq.bin");
  const auto client = open_as(Role::kClient);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), StatusCode::kDataLoss) << client.status().to_string();
  EXPECT_NE(client.status().message().find("pq"), std::string::npos);
  // The IVF client does not read pq.bin.
  EXPECT_TRUE(open_as(Role::kClient, CandidateIndex::kIvf).ok());
  // A first provider load hashes it; a reload of the same manifest does not read it again.
  EXPECT_EQ(open_as(Role::kProvider).status().code(), StatusCode::kDataLoss);
  OpenSpec reload;
  reload.role = Role::kProvider;
  reload.served = &first->manifest();
  EXPECT_TRUE(IndexVersion::open(o.out, reload).ok());
  // The payloads the provider serves are hashed on every load.
  flip_a_byte(o.out / "payloads.bin");
  EXPECT_EQ(IndexVersion::open(o.out, reload).status().code(), StatusCode::kDataLoss);
}

TEST_F(IndexVersionTest, AClientCopyWithoutOptionalArtifactsSaysWhatItLacks) {
  fs::remove(o.out / "payloads.bin");
  for (const auto& e : fs::directory_iterator(o.out)) {
    if (e.path().filename().string().rfind("payloads", 0) == 0) fs::remove(e.path());
  }
  const auto v = open_as(Role::kClient);
  ASSERT_TRUE(v.ok()) << v.status().to_string();
  EXPECT_FALSE(v->holds(index::kPayloadsArtifact));
  EXPECT_EQ(v->payloads().status().code(), StatusCode::kNotFound);
  EXPECT_EQ(v->path_of("no-such-artifact").status().code(), StatusCode::kNotFound);
  fs::remove(o.out / "pq.bin");
  const auto flat = open_as(Role::kClient, CandidateIndex::kFlat);
  ASSERT_FALSE(flat.ok());
  EXPECT_EQ(flat.status().code(), StatusCode::kNotFound);
  EXPECT_NE(flat.status().message().find("pq.bin"), std::string::npos) << flat.status().message();
  const auto any = open_as(Role::kClient);  // kAuto falls back to the IVF directory
  ASSERT_TRUE(any.ok()) << any.status().to_string();
  EXPECT_EQ(any->candidates(), CandidateIndex::kIvf);
}

// A tool hashes at open only the tombstones; each view, verified_path() and exact_store() hash
// the artifact they read when they read it, and nothing else.
TEST_F(IndexVersionTest, AToolHashesEachArtifactWhenItReadsIt) {
  flip_a_byte(o.out / "pq.bin");
  const auto v = IndexVersion::open(o.out, tool_spec());
  ASSERT_TRUE(v.ok()) << v.status().to_string();
  EXPECT_EQ(v->deleted(), (std::vector<std::uint32_t>{3, 250}));
  EXPECT_TRUE(v->projection().ok());
  EXPECT_TRUE(v->payloads().ok());
  EXPECT_EQ(v->flat_codes().status().code(), StatusCode::kDataLoss);
  const auto pq = v->verified_path(index::kPqArtifact);
  ASSERT_FALSE(pq.ok());
  EXPECT_EQ(pq.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(pq.status().message().find("pq"), std::string::npos) << pq.status().message();
  EXPECT_EQ(v->verified_path("no-such-artifact").status().code(), StatusCode::kNotFound);

  const auto store = v->exact_store();
  ASSERT_TRUE(store.ok()) << store.status().to_string();
  EXPECT_EQ(store->rows(), 400u);  // the base's rows
  const auto store_file = *v->path_of(index::kExactStoreArtifact);
  flip_a_byte(store_file);
  EXPECT_EQ(v->exact_store().status().code(), StatusCode::kDataLoss);

  // The tombstones are read at open: a tampered one refuses the open.
  flip_a_byte(*v->path_of(index::generation_artifact(index::kTombstonesArtifact, 1)));
  EXPECT_EQ(IndexVersion::open(o.out, tool_spec()).status().code(), StatusCode::kDataLoss);
}

// A base-only index has no tombstones to hash: opening it as a tool hashes nothing (not every
// artifact), and the artifact it then reads is still checked.
TEST(IndexVersionToolTest, ABaseOnlyIndexIsOpenedWithoutHashingAnything) {
  testing::Collection c{"index-version-base"};
  auto o = testing::tiny_index_options(c, 128);
  ASSERT_TRUE(index::build_index(o, nullptr).ok());
  flip_a_byte(o.out / "payloads.bin");
  const auto v = IndexVersion::open(o.out, tool_spec());
  ASSERT_TRUE(v.ok()) << v.status().to_string();
  EXPECT_EQ(v->generations(), 0u);
  EXPECT_TRUE(v->deleted().empty());
  EXPECT_TRUE(v->projection().ok());
  EXPECT_EQ(v->payloads().status().code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace privsearch::version
