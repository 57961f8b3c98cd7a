// The lexical encoder's artifact: a saved and reloaded encoder encodes queries bit for bit like
// the original; truncated, corrupted or foreign files are refused with kDataLoss.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "index/artifacts/atomic_file.h"
#include "index/encoders/lexical_encoder.h"

namespace privsearch::index {
namespace {

namespace fs = std::filesystem;

class EncoderArtifactTest : public ::testing::Test {
 protected:
  EncoderArtifactTest()
      : dir(fs::temp_directory_path() / ("privsearch-encoder-" + std::to_string(::getpid()))) {
    fs::create_directories(dir);
    const std::vector<std::string> docs = {
        "protein folding in the cell", "cell membrane transport of ions",
        "deep learning for protein structure", "ion channels and membrane potential"};
    LexicalEncoderConfig cfg;
    cfg.dim = 64;
    cfg.seed = 9;
    encoder = LexicalEncoder::fit(docs, cfg);
    file = dir / "encoder.bin";
    EXPECT_TRUE(encoder.save(file).ok());
  }
  ~EncoderArtifactTest() override { fs::remove_all(dir); }

  void write(const std::vector<std::uint8_t>& bytes) {
    ASSERT_TRUE(write_bytes_atomically(file, bytes).ok());
  }

  fs::path dir, file;
  LexicalEncoder encoder = LexicalEncoder::fit({"x"}, LexicalEncoderConfig{});
};

TEST_F(EncoderArtifactTest, ReloadedEncoderEncodesQueriesIdentically) {
  const auto back = *LexicalEncoder::load(file);
  EXPECT_EQ(back.id(), encoder.id());
  EXPECT_EQ(back.dim(), 64u);
  for (const char* q : {"protein membrane", "ion transport in cells", "unknown words only"}) {
    EXPECT_EQ(back.encode_query(q), encoder.encode_query(q)) << q;
  }
  // The query vector is not trivially zero for known terms.
  const auto v = back.encode_query("protein");
  EXPECT_NE(std::count(v.begin(), v.end(), 0.0f), static_cast<long>(v.size()));
}

TEST_F(EncoderArtifactTest, DamagedFilesAreRefused) {
  const auto good = *read_file_bytes(file);
  for (const std::size_t keep :
       {std::size_t{0}, std::size_t{3}, std::size_t{20}, good.size() / 2, good.size() - 1}) {
    write({good.begin(), good.begin() + static_cast<long>(keep)});
    EXPECT_EQ(LexicalEncoder::load(file).status().code(), StatusCode::kDataLoss) << keep;
  }
  auto bad = good;
  bad[0] = 'X';  // magic
  write(bad);
  EXPECT_EQ(LexicalEncoder::load(file).status().code(), StatusCode::kDataLoss);
  bad = good;
  bad[4] = 9;  // version
  write(bad);
  EXPECT_EQ(LexicalEncoder::load(file).status().code(), StatusCode::kDataLoss);
  bad = good;
  bad.push_back(0);  // trailing byte
  write(bad);
  EXPECT_EQ(LexicalEncoder::load(file).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(LexicalEncoder::load(dir / "missing.bin").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace privsearch::index
