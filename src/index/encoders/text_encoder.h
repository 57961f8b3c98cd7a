// The query side of a built-in text encoder, whichever it is: what `privsearch build` saves as
// the index's public "encoder" artifact and what the search client loads to encode queries.
// load_text_encoder() dispatches on the artifact's magic: "PSLE" (LexicalEncoder) or "PSGE"
// (GloveEncoder, which also needs the word-vector file it was fitted with; its SHA-256 is in the
// artifact and a different file is refused).
// Thread safety: implementations are immutable after construction.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace privsearch::index {

class TextEncoder {
 public:
  virtual ~TextEncoder() = default;
  virtual std::size_t dim() const = 0;
  virtual std::vector<float> encode_query(std::string_view text) const = 0;
  virtual std::string id() const = 0;
};

// word_vectors: the converted GloVe file for "PSGE" artifacts (ignored for lexical ones).
Result<std::unique_ptr<TextEncoder>> load_text_encoder(const std::filesystem::path& file,
                                                       const std::filesystem::path& word_vectors);

}  // namespace privsearch::index
