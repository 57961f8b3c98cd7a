// Fuzz target: the word-vector decoders (index/encoders/word_vectors.h,
// index/encoders/glove_encoder.h). The first byte picks the decoder, the rest is the file: 0 the
// wink-embeddings JSON importer, 1 the binary word-vector file, 2 the glove encoder artifact
// (against a fixed 3-word vector file). Properties: no crash; an accepted binary file re-saves
// byte-identically.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/check.h"
#include "index/encoders/glove_encoder.h"
#include "index/encoders/text_encoder.h"
#include "index/encoders/word_vectors.h"

namespace {
namespace fs = std::filesystem;

fs::path scratch() {
  static const fs::path dir = [] {
    auto d = fs::temp_directory_path() / ("privsearch-fuzz-wv-" + std::to_string(::getpid()));
    fs::create_directories(d);
    privsearch::index::WordVectors v(3, {"alpha", "beta", "gamma"}, {1, 0, 0, 0, 1, 0, 0, 0, 1});
    (void)v.save(d / "fixed.pswv");
    return d;
  }();
  return dir;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace privsearch;
  if (size == 0) return 0;
  const fs::path dir = scratch();
  const fs::path input = dir / "input";
  std::ofstream(input, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  switch (data[0] % 3) {
    case 0:
      (void)index::import_wink_json(input);
      break;
    case 1: {
      const auto r = index::WordVectors::load(input);
      if (r.ok()) {
        PRIVSEARCH_CHECK(r->save(dir / "again").ok(), "re-save failed");
        PRIVSEARCH_CHECK(slurp(dir / "again") == slurp(input),
                         "word-vector decode/encode is not a bijection");
      }
      break;
    }
    default:
      (void)index::load_text_encoder(input, dir / "fixed.pswv");
      break;
  }
  return 0;
}
