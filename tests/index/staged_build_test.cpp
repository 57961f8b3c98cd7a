// A build never destroys the index it replaces (index/artifacts/staged_directory.h): a failed
// build, a failed signature or a killed build leaves the old index loadable and byte for byte
// as it was; a complete one replaces it in one step and keeps the files a user kept there; a
// directory that is not an index is refused, untouched.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "index/artifacts/manifest.h"
#include "index/artifacts/payload_store.h"
#include "index/artifacts/staged_directory.h"
#include "index/build.h"
#include "testing/tiny_collection.h"

namespace privsearch::index {
namespace {

namespace fs = std::filesystem;
using testing::Collection;

// The tiny collection's index (its own vectors, d' = 16, 256-byte records).
BuildOptions small_build(const Collection& c) { return testing::tiny_index_options(c, 256); }

std::string read_all(const fs::path& f) {
  std::ifstream in(f, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Nothing of a build is left beside `out` but `out` itself.
std::size_t staging_dirs(const fs::path& out) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(out.parent_path())) {
    n += e.path().filename().string().rfind("." + out.filename().string() + ".staging-", 0) == 0;
  }
  return n;
}

TEST(StagedBuild, AFailedRebuildLeavesTheServedIndexAsItWas) {
  Collection c;
  auto o = small_build(c);
  const auto first = build_index(o, nullptr);
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  const std::string manifest = read_all(o.out / "manifest.json");
  const std::string store = read_all(o.out / "exact.store");
  o.doc_vectors = c.dir / "missing.npy";  // fails after the corpus is read
  EXPECT_FALSE(build_index(o, nullptr).ok());
  o.doc_vectors = c.dir / "vectors.npy";
  o.before_commit = [](const fs::path&) { return internal_error("the signature failed"); };
  EXPECT_EQ(build_index(o, nullptr).status().code(), StatusCode::kInternal);
  EXPECT_EQ(read_all(o.out / "manifest.json"), manifest);
  EXPECT_EQ(read_all(o.out / "exact.store"), store);
  EXPECT_TRUE(load_manifest(o.out).ok());  // every artifact re-hashed
  EXPECT_EQ(staging_dirs(o.out), 0u);
}

TEST(StagedBuild, ACompleteRebuildReplacesTheIndexAndKeepsTheUsersFiles) {
  Collection c;
  auto o = small_build(c);
  ASSERT_TRUE(build_index(o, nullptr).ok());
  std::ofstream(o.out / "notes.txt") << "mine";
  std::ofstream(o.out / "stale-artifact.bin") << "listed by nobody after the rebuild";
  o.seed = 7;  // another version
  fs::path staged_seen;
  o.before_commit = [&](const fs::path& staged) {
    staged_seen = staged;
    EXPECT_TRUE(fs::exists(staged / "manifest.json"));
    EXPECT_EQ(read_all(o.out / "notes.txt"), "mine");  // the old index still serves meanwhile
    return Status();
  };
  const auto second = build_index(o, nullptr);
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  EXPECT_EQ(load_manifest(o.out)->version_id, second->version_id);
  EXPECT_EQ(read_all(o.out / "notes.txt"), "mine");
  EXPECT_TRUE(fs::exists(o.out / "stale-artifact.bin"));  // not the old index's: kept
  EXPECT_FALSE(fs::exists(staged_seen));
  EXPECT_EQ(staging_dirs(o.out), 0u);
}

TEST(StagedBuild, RefusesADirectoryThatIsNotAnIndex) {
  Collection c;
  auto o = small_build(c);
  o.out = c.dir / "home";
  fs::create_directories(o.out);
  std::ofstream(o.out / "thesis.tex") << "years of work";
  const auto r = build_index(o, nullptr);
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("no manifest.json"), std::string::npos);
  EXPECT_EQ(read_all(o.out / "thesis.tex"), "years of work");
  o.out = c.dir / "empty";
  fs::create_directories(o.out);
  EXPECT_TRUE(build_index(o, nullptr).ok());  // an empty directory is fine
}

// A build killed mid-way leaves its staging directory; the next build of the same directory
// removes it (its process is gone) and the old index was never touched.
TEST(StagedBuild, AKilledBuildsLeftoversGoAtTheNextBuild) {
  Collection c;
  auto o = small_build(c);
  const pid_t child = ::fork();
  if (child == 0) {
    auto staged = StagedDirectory::begin(o.out);
    std::ofstream(staged->path() / "exact.store") << "half";
    ::_exit(0);  // no destructor: as if killed
  }
  int st = 0;
  ASSERT_EQ(::waitpid(child, &st, 0), child);
  EXPECT_EQ(staging_dirs(o.out), 1u);
  EXPECT_FALSE(fs::exists(o.out));
  ASSERT_TRUE(build_index(o, nullptr).ok());
  EXPECT_EQ(staging_dirs(o.out), 0u);
  EXPECT_TRUE(load_manifest(o.out).ok());
}

// Nothing is cut silently: the build says how many documents a record cuts and what `auto`
// costs; record_bytes 0 (`--record-bytes auto`) keeps every one whole.
TEST(StagedBuild, LongDocumentsAreReportedAndAutoKeepsThemWhole) {
  Collection c;
  std::vector<Document> docs;
  for (std::size_t i = 0; i < 400; ++i) {
    docs.push_back({"d" + std::to_string(i), "Title " + std::to_string(i),
                    std::string(i % 100 == 7 ? 3000 : 100, static_cast<char>('a' + i % 26))});
  }
  auto o = small_build(c);
  o.collection.clear();
  o.doc_vectors.clear();
  o.documents = &docs;
  o.vectors = &c.vectors;
  std::vector<std::string> said;
  ASSERT_TRUE(build_index(o, [&](const std::string& s) { said.push_back(s); }).ok());
  const auto warning = std::find_if(said.begin(), said.end(), [](const std::string& s) {
    return s.rfind("warning: 4 of 400 documents are longer than a 256-byte record", 0) == 0;
  });
  ASSERT_NE(warning, said.end());
  EXPECT_NE(warning->find("--record-bytes auto keeps every one whole in 3072-byte records"),
            std::string::npos)
      << *warning;
  EXPECT_NE(PayloadStore::open(o.out / "payloads.bin")->text(7)->find(kTruncatedMarker),
            std::string::npos);
  o.record_bytes = 0;
  said.clear();
  ASSERT_TRUE(build_index(o, [&](const std::string& s) { said.push_back(s); }).ok());
  const auto store = *PayloadStore::open(o.out / "payloads.bin");
  EXPECT_EQ(store.record_bytes(), 3072u);  // 4 + "Title 307" + 2 + 3000 = 3015, to 64s
  EXPECT_EQ(*store.text(7), payload_body(docs[7]));
  for (const auto& s : said) EXPECT_EQ(s.find("warning"), std::string::npos) << s;
  EXPECT_EQ(record_fit(docs, 3015).largest_record, 3015u);
  EXPECT_EQ(record_fit(docs, 3015).cut, 0u);
  EXPECT_EQ(record_fit(docs, 3012).cut, 4u);  // "Title 7" needs 3013
}

// A collection smaller than one PQ codebook (256 centroids a subquantizer) is indexed: its
// vectors are the codebook, so each document's code is exact (a build of 100 documents used to
// fail with "PQ with 8 bits needs at least 256").
TEST(StagedBuild, ACollectionSmallerThanOneCodebookIsIndexed) {
  Collection c("small", 100);
  auto o = small_build(c);
  const auto built = build_index(o, nullptr);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  EXPECT_EQ(built->documents, 100u);
  EXPECT_TRUE(load_manifest(o.out).ok());
}

}  // namespace
}  // namespace privsearch::index
