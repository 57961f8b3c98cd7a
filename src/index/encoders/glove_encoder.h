// The word-vector encoder on GloVe 6B 100-d (index/encoders/word_vectors.h): a text is the weighted
// sum of its words' vectors, then normalized.
//  - "glove-idf": weight idf(w) = ln(1 + (N - df + 0.5) / (df + 0.5)) from the corpus;
//  - "glove-sif": smooth inverse frequency a / (a + p(w)), p the corpus unigram frequency,
//    a = 1e-3, and the projection on the documents' first principal component removed
//    (Arora, Liang, Ma 2017, "A simple but tough-to-beat baseline for sentence embeddings").
// Words are lowercase runs of ASCII letters and digits (GloVe's vocabulary is not stemmed);
// words without a vector are skipped; a word unseen in the corpus gets the largest weight.
// Measured in the issue notes (SciFact / Cranfield nDCG@10); the lexical encoder stays the
// default because it measures better.
// Artifact (save/load): magic "PSGE", u16 version 1, u8 weighting (1 idf, 2 sif), u32 dim,
// f64 weight of unseen words, u32 count + count x (string word, f64 weight), u32 n + n x f64
// principal component (n = 0 or dim), the 32-byte SHA-256 of the word-vector file. load()
// refuses another word-vector file, out-of-range or non-finite values and trailing bytes.
// Thread safety: immutable after fit; shares the word vectors.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/sha256.h"
#include "core/status.h"
#include "index/encoders/beir.h"
#include "index/encoders/text_encoder.h"
#include "index/encoders/word_vectors.h"
#include "index/vectors_io.h"

namespace privsearch::index {

enum class GloveWeighting { kIdf, kSif };

std::vector<std::string> tokenize_words(std::string_view text);

// The word-vector file and its SHA-256 (what a GloveEncoder artifact pins).
struct LoadedWordVectors {
  std::shared_ptr<const WordVectors> vectors;
  Sha256Digest digest{};
};
Result<LoadedWordVectors> load_word_vectors(const std::filesystem::path& file);

class GloveEncoder : public TextEncoder {
 public:
  // vectors_digest: SHA-256 of the word-vector file (word_vectors_digest()).
  static Result<GloveEncoder> fit(const std::vector<std::string>& documents,
                                  std::shared_ptr<const WordVectors> vectors,
                                  GloveWeighting weighting, const Sha256Digest& vectors_digest);
  std::size_t dim() const override { return vectors_->dim(); }
  std::vector<float> encode(std::string_view text) const;
  std::vector<float> encode_query(std::string_view text) const override { return encode(text); }
  // "glove-idf-v1/100/<corpus words>" or "glove-sif-v1/100/<corpus words>"
  std::string id() const override;

  Status save(const std::filesystem::path& file) const;
  static Result<GloveEncoder> load(const std::filesystem::path& file,
                                   const std::filesystem::path& word_vectors);

 private:
  double weight(const std::string& word) const;
  std::shared_ptr<const WordVectors> vectors_;
  Sha256Digest vectors_digest_{};
  GloveWeighting weighting_ = GloveWeighting::kSif;
  std::unordered_map<std::string, double> weights_;
  double unseen_weight_ = 1.0;
  std::vector<double> principal_;  // SIF: unit first principal component (empty for idf)
};

// The encoder fitted on `docs` (title + " " + text) with the word vectors at `word_vectors`,
// and every document encoded (row i = document i). kNotFound names `make glove` when the
// word-vector file is missing.
struct GloveEncodedCorpus {
  GloveEncoder encoder;
  Matrix vectors;
};
Result<GloveEncodedCorpus> fit_and_encode_glove(const std::vector<Document>& docs,
                                                const std::filesystem::path& word_vectors,
                                                GloveWeighting weighting);

}  // namespace privsearch::index
