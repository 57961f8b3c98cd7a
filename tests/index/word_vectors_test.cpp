// Word vectors: the wink-embeddings JSON importer (format, escapes, every refusal with its byte
// offset), the binary round trip and its checks; the glove encoders on hand-made vectors; and,
// when scripts/fetch_glove.sh has run, the real GloVe vectors on SciFact against the figures
// measured for the issue (IDF-weighted mean 0.255).
#include "index/encoders/word_vectors.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "eval/ladder.h"
#include "index/encoders/beir.h"
#include "index/encoders/glove_encoder.h"
#include "index/encoders/text_encoder.h"

namespace privsearch::index {
namespace {

namespace fs = std::filesystem;

class WordVectorsTest : public ::testing::Test {
 protected:
  fs::path dir = fs::temp_directory_path() / ("privsearch-wv-" + std::to_string(::getpid()));
  void SetUp() override { fs::create_directories(dir); }
  void TearDown() override { fs::remove_all(dir); }
  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir / name, std::ios::binary) << text;
    return dir / name;
  }
};

constexpr const char* kGood =
    R"({"precision":8,"l2NormIndex":3,"wordIndex":4,"size":3,"dimensions":3,)"
    R"("words":["the","\"","caf\u00e9"],)"
    R"("vectors":{"the":[0.5,-1,2e-1,1.1,0],"\"":[1,0,0,1,1],)"
    "\n  "
    R"("caf\u00e9":[0,0,-3.25,3.25,2]},"unkVector":[0,0,0,-1]})";

TEST_F(WordVectorsTest, ImportsTheWinkFormat) {
  const auto wv = import_wink_json(write("good.json", kGood));
  ASSERT_TRUE(wv.ok()) << wv.status().to_string();
  EXPECT_EQ(wv->dim(), 3u);
  EXPECT_EQ(wv->size(), 3u);
  const float* the = wv->find("the");
  ASSERT_NE(the, nullptr);
  EXPECT_FLOAT_EQ(the[0], 0.5f);
  EXPECT_FLOAT_EQ(the[1], -1.0f);
  EXPECT_FLOAT_EQ(the[2], 0.2f);
  ASSERT_NE(wv->find("\""), nullptr);
  const float* cafe = wv->find("caf\xc3\xa9");
  ASSERT_NE(cafe, nullptr);
  EXPECT_FLOAT_EQ(cafe[2], -3.25f);
  EXPECT_EQ(wv->find("absent"), nullptr);
}

TEST_F(WordVectorsTest, RefusesMalformedJsonNamingTheOffset) {
  const std::string good = kGood;
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"truncated", good.substr(0, good.size() / 2)},
      {"short vector", R"({"dimensions":3,"vectors":{"a":[1,2]}})"},
      {"bad number", R"({"dimensions":2,"vectors":{"a":[1,x]}})"},
      {"not finite", R"({"dimensions":1,"vectors":{"a":[1e999]}})"},
      {"duplicate", R"({"dimensions":1,"vectors":{"a":[1],"a":[2]}})"},
      {"no vectors", R"({"dimensions":1,"words":[]})"},
      {"vectors first", R"({"vectors":{"a":[1]},"dimensions":1})"},
      {"bad dimensions", R"({"dimensions":0,"vectors":{}})"},
      {"empty", ""},
  };
  for (const auto& [name, text] : bad) {
    const auto r = import_wink_json(write("bad.json", text));
    EXPECT_FALSE(r.ok()) << name;
    EXPECT_NE(r.status().message().find("bad.json"), std::string::npos) << name;
  }
  EXPECT_EQ(import_wink_json(dir / "missing.json").status().code(), StatusCode::kNotFound);
}

TEST_F(WordVectorsTest, BinaryRoundTripAndChecks) {
  const auto wv = *import_wink_json(write("good.json", kGood));
  ASSERT_TRUE(wv.save(dir / "v.pswv").ok());
  const auto back = WordVectors::load(dir / "v.pswv");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->words(), wv.words());
  EXPECT_FLOAT_EQ(back->find("caf\xc3\xa9")[3 - 1], -3.25f);
  std::ifstream in(dir / "v.pswv", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  EXPECT_FALSE(WordVectors::load(write("t.pswv", bytes.substr(0, bytes.size() - 1))).ok());
  EXPECT_FALSE(WordVectors::load(write("x.pswv", bytes + "x")).ok());
  auto magic = bytes;
  magic[0] = 'X';
  EXPECT_FALSE(WordVectors::load(write("m.pswv", magic)).ok());
  auto nan = bytes;
  const float q = std::nanf("");
  std::memcpy(nan.data() + nan.size() - 4, &q, 4);
  EXPECT_FALSE(WordVectors::load(write("n.pswv", nan)).ok());
  // No partial file under the final name after a failed save into a missing directory.
  EXPECT_FALSE(wv.save(dir / "no" / "such" / "v.pswv").ok());
}

TEST(GloveEncoder, WeightsAndPrincipalComponent) {
  // Three orthogonal words and a frequent one along a fourth axis.
  const auto wv = std::make_shared<const WordVectors>(
      4, std::vector<std::string>{"alpha", "beta", "gamma", "common"},
      std::vector<float>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0.2f, 0.2f, 0.2f, 1});
  const Sha256Digest digest{};
  const std::vector<std::string> docs = {"alpha common", "beta common", "gamma common common",
                                         "Alpha, BETA! common"};
  EXPECT_EQ(tokenize_words("Alpha, BETA! x1"), (std::vector<std::string>{"alpha", "beta", "x1"}));
  const auto idf = *GloveEncoder::fit(docs, wv, GloveWeighting::kIdf, digest);
  // "alpha" (df 2) outweighs "common" (df 4): the encoding leans to the alpha axis.
  const auto a = idf.encode("alpha common");
  EXPECT_GT(a[0], a[3]);
  double norm = 0;
  for (const float v : a) norm += double(v) * v;
  EXPECT_NEAR(norm, 1.0, 1e-6);
  // SIF removes the shared direction: the documents' encodings are nearly orthogonal to it, and
  // a query equal to a document is closest to that document.
  const auto sif = *GloveEncoder::fit(docs, wv, GloveWeighting::kSif, digest);
  std::vector<std::vector<float>> enc;
  for (const auto& d : docs) enc.push_back(sif.encode(d));
  const auto q = sif.encode("gamma");
  std::size_t best = 0;
  double best_score = -2;
  for (std::size_t i = 0; i < enc.size(); ++i) {
    double s = 0;
    for (std::size_t j = 0; j < 4; ++j) s += double(q[j]) * enc[i][j];
    if (s > best_score) {
      best_score = s;
      best = i;
    }
  }
  EXPECT_EQ(best, 2u);
  EXPECT_EQ(sif.encode("unknown words only"), std::vector<float>(4, 0.0f));
  EXPECT_NE(idf.id().find("glove-idf-v1/4/"), std::string::npos);
  EXPECT_FALSE(GloveEncoder::fit({}, wv, GloveWeighting::kSif, digest).ok());
}

// The encoder as an index artifact: round trip through load_text_encoder, the word-vector file
// pinned by its SHA-256, tampering refused.
TEST_F(WordVectorsTest, GloveArtifactRoundTripAndPinnedVectors) {
  const auto wv = *import_wink_json(write("good.json", kGood));
  ASSERT_TRUE(wv.save(dir / "v.pswv").ok());
  const std::vector<Document> docs = {{"d1", "the", "cafÃ© the"}, {"d2", "", "\" the"}};
  auto fitted = fit_and_encode_glove(docs, dir / "v.pswv", GloveWeighting::kSif);
  ASSERT_TRUE(fitted.ok()) << fitted.status().to_string();
  EXPECT_EQ(fitted->vectors.rows, 2u);
  EXPECT_EQ(fitted->vectors.cols, 3u);
  ASSERT_TRUE(fitted->encoder.save(dir / "enc.bin").ok());
  const auto loaded = load_text_encoder(dir / "enc.bin", dir / "v.pswv");
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_EQ((*loaded)->id(), fitted->encoder.id());
  EXPECT_EQ((*loaded)->encode_query("caf\u00e9 query"), fitted->encoder.encode("caf\u00e9 query"));
  EXPECT_EQ((*loaded)->encode_query("the"), fitted->encoder.encode("the"));
  // Other word vectors (same words, other values): refused by digest.
  WordVectors other(3, wv.words(), std::vector<float>(9, 0.25f));
  ASSERT_TRUE(other.save(dir / "other.pswv").ok());
  EXPECT_EQ(load_text_encoder(dir / "enc.bin", dir / "other.pswv").status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(load_text_encoder(dir / "enc.bin", dir / "absent.pswv").status().code(),
            StatusCode::kNotFound);
  // Truncated / trailing / bad magic artifacts.
  std::ifstream in(dir / "enc.bin", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  EXPECT_FALSE(
      load_text_encoder(write("t.bin", bytes.substr(0, bytes.size() - 3)), dir / "v.pswv").ok());
  EXPECT_FALSE(load_text_encoder(write("x.bin", bytes + "x"), dir / "v.pswv").ok());
  EXPECT_FALSE(load_text_encoder(write("m.bin", "NOPE" + bytes.substr(4)), dir / "v.pswv").ok());
  EXPECT_EQ(fit_and_encode_glove(docs, dir / "absent.pswv", GloveWeighting::kIdf).status().code(),
            StatusCode::kNotFound);
}

// The real vectors (make glove) on SciFact: the IDF-weighted mean reproduces the issue's 0.255.
TEST(GloveEncoderReal, SciFactQuality) {
  const auto vectors = default_word_vectors_path();
  const auto data = fs::path(PRIVSEARCH_SHARED_DATA) / "scifact";
  if (!fs::exists(vectors)) GTEST_SKIP() << "no word vectors at " << vectors << ": run make glove";
  if (!fs::exists(data)) GTEST_SKIP() << "shared data absent: " << data;
  const auto c = *load_collection(data);
  eval::LadderOptions o;
  o.encoder = "glove-idf";
  o.resamples = 100;
  const auto r = eval::run_ladder(c, o, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const auto& raw = r->methods.front();
  std::printf("%s on SciFact: %s nDCG@10 = %.4f\n", r->encoder_id.c_str(), raw.name.c_str(),
              raw.ndcg_at_10.mean);
  EXPECT_NEAR(raw.ndcg_at_10.mean, 0.255, 0.01);
}

}  // namespace
}  // namespace privsearch::index
