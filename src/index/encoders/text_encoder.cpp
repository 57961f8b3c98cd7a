#include "index/encoders/text_encoder.h"

#include <cstring>
#include <fstream>

#include "index/encoders/glove_encoder.h"
#include "index/encoders/lexical_encoder.h"

namespace privsearch::index {

Result<std::unique_ptr<TextEncoder>> load_text_encoder(const std::filesystem::path& file,
                                                       const std::filesystem::path& word_vectors) {
  char magic[4] = {};
  std::ifstream in(file, std::ios::binary);
  if (!in || !in.read(magic, 4)) {
    return data_loss_error("`" + file.string() + "`: cannot read an encoder artifact");
  }
  if (std::memcmp(magic, "PSLE", 4) == 0) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto e, LexicalEncoder::load(file));
    return std::unique_ptr<TextEncoder>(new LexicalEncoder(std::move(e)));
  }
  if (std::memcmp(magic, "PSGE", 4) == 0) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto e, GloveEncoder::load(file, word_vectors));
    return std::unique_ptr<TextEncoder>(new GloveEncoder(std::move(e)));
  }
  return data_loss_error("`" + file.string() + "`: not an encoder artifact (magic)");
}

}  // namespace privsearch::index
