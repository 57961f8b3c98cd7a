#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "index/artifacts/manifest.h"
#include "index/artifacts/payload_store.h"

namespace privsearch::index {
namespace {

namespace fs = std::filesystem;

struct Dir {
  Dir()
      : path(fs::temp_directory_path() / ("privsearch-manifest-" + std::to_string(::getpid()) +
                                          "-" + std::to_string(counter++))) {
    fs::create_directories(path);
  }
  ~Dir() { fs::remove_all(path); }
  void write(const std::string& name, const std::string& content) const {
    std::ofstream(path / name, std::ios::binary) << content;
  }
  static inline int counter = 0;
  fs::path path;
};

Manifest sample() {
  Manifest m;
  m.collection = "tiny";
  m.encoder_id = "test-encoder-v1";
  m.documents = 3;
  m.input_dim = 8;
  m.dim = 4;
  m.pq_m = 2;
  m.seed = 7;
  m.artifacts = {{"exact_store", "exact.store", 0, ""}, {"pq", "pq.bin", 0, ""}};
  return m;
}

TEST(Manifest, WriteThenLoadVerifiesEveryArtifact) {
  Dir d;
  d.write("exact.store", "exact-bytes");
  d.write("pq.bin", "pq-bytes");
  Manifest m = sample();
  ASSERT_TRUE(write_manifest(d.path, m).ok());
  EXPECT_EQ(m.version_id.size(), 64u);
  const auto back = *load_manifest(d.path);
  EXPECT_EQ(back.version_id, m.version_id);
  EXPECT_EQ(back.find("pq")->bytes, 8u);
  EXPECT_TRUE(check_version(back, m.version_id).ok());
}

TEST(Manifest, TamperedArtifactIsDetected) {
  Dir d;
  d.write("exact.store", "exact-bytes");
  d.write("pq.bin", "pq-bytes");
  Manifest m = sample();
  ASSERT_TRUE(write_manifest(d.path, m).ok());
  d.write("pq.bin", "pq-bytez");
  const auto r = load_manifest(d.path);
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("pq.bin"), std::string::npos);
  fs::remove(d.path / "exact.store");
  EXPECT_EQ(load_manifest(d.path).status().code(), StatusCode::kNotFound);
}

TEST(Manifest, EditedManifestOrOtherVersionIsRefused) {
  Dir d;
  d.write("exact.store", "a");
  d.write("pq.bin", "b");
  Manifest m = sample();
  ASSERT_TRUE(write_manifest(d.path, m).ok());
  EXPECT_EQ(check_version(m, std::string(64, '0')).code(), StatusCode::kFailedPrecondition);
  std::ifstream in(d.path / "manifest.json");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  const auto pos = text.find("\"seed\": 7");
  ASSERT_NE(pos, std::string::npos);
  text.replace(pos, 9, "\"seed\": 8");
  d.write("manifest.json", text);
  EXPECT_EQ(load_manifest(d.path).status().code(), StatusCode::kDataLoss);
  d.write("manifest.json", "{not json");
  EXPECT_EQ(load_manifest(d.path).status().code(), StatusCode::kDataLoss);
}

TEST(Manifest, ArtifactPathsMayNotEscapeTheDirectory) {
  Dir d;
  Manifest m = sample();
  m.artifacts = {{"x", "../etc/passwd", 0, ""}};
  EXPECT_EQ(write_manifest(d.path, m).code(), StatusCode::kInvalidArgument);
}

TEST(PayloadStoreTest, RoundTripAndTruncationMarker) {
  Dir d;
  std::vector<Document> docs = {{"a", "Title A", "short text"},
                                {"b", "", std::string(500, 'x')},
                                {"c", "T", "caf\xC3\xA9 " + std::string(200, 'y')}};
  ASSERT_TRUE(PayloadStore::write(d.path / "p.bin", docs, 128).ok());
  const auto s = *PayloadStore::open(d.path / "p.bin");
  EXPECT_EQ(s.records(), 3u);
  EXPECT_EQ(*s.text(0), "Title A\n\nshort text");
  const auto long_text = *s.text(1);
  EXPECT_LE(long_text.size(), 124u);
  EXPECT_EQ(long_text.substr(long_text.size() - kTruncatedMarker.size()), kTruncatedMarker);
  EXPECT_EQ(*PayloadStore::decode_record(s.record(0), s.record_bytes()), *s.text(0));
  EXPECT_EQ(s.text(3).status().code(), StatusCode::kOutOfRange);
  // The cut flag: set for the cut documents only, so a document whose own text ends like the
  // marker is not taken for a cut one.
  EXPECT_FALSE(PayloadStore::decode_payload(s.record(0), s.record_bytes())->cut);
  EXPECT_TRUE(PayloadStore::decode_payload(s.record(1), s.record_bytes())->cut);
  EXPECT_TRUE(PayloadStore::decode_payload(s.record(2), s.record_bytes())->cut);
  std::vector<Document> marker = {{"m", "", std::string("ends like a cut") + " [...]"}};
  ASSERT_TRUE(PayloadStore::write(d.path / "m.bin", marker, 128).ok());
  const auto m = *PayloadStore::open(d.path / "m.bin");
  const auto whole = *PayloadStore::decode_payload(m.record(0), m.record_bytes());
  EXPECT_FALSE(whole.cut);
  EXPECT_EQ(whole.text, marker[0].text);
}

TEST(PayloadStoreTest, CorruptFilesAreRejected) {
  Dir d;
  std::vector<Document> docs = {{"a", "t", "x"}};
  ASSERT_TRUE(PayloadStore::write(d.path / "p.bin", docs, 64).ok());
  fs::resize_file(d.path / "p.bin", 64 + 63);
  EXPECT_EQ(PayloadStore::open(d.path / "p.bin").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(PayloadStore::write(d.path / "q.bin", docs, 8).code(), StatusCode::kInvalidArgument);
  std::vector<std::uint8_t> bad(64, 0);
  bad[0] = 200;  // declares 200 bytes in a 64-byte record
  EXPECT_EQ(PayloadStore::decode_record(bad.data(), 64).status().code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace privsearch::index
