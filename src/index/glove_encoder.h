// The word-vector encoder on GloVe 6B 100-d (index/word_vectors.h): a text is the weighted sum
// of its words' vectors, then normalized.
//  - "glove-idf": weight idf(w) = ln(1 + (N - df + 0.5) / (df + 0.5)) from the corpus;
//  - "glove-sif": smooth inverse frequency a / (a + p(w)), p the corpus unigram frequency,
//    a = 1e-3, and the projection on the documents' first principal component removed
//    (Arora, Liang, Ma 2017, "A simple but tough-to-beat baseline for sentence embeddings").
// Words are lowercase runs of ASCII letters and digits (GloVe's vocabulary is not stemmed);
// words without a vector are skipped; a word unseen in the corpus gets the largest weight.
// Measured in the issue notes (SciFact / Cranfield nDCG@10); the lexical encoder stays the
// default because it measures better.
// Thread safety: immutable after fit; the word vectors must outlive the encoder.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "index/vectors_io.h"
#include "index/word_vectors.h"

namespace privsearch::index {

enum class GloveWeighting { kIdf, kSif };

std::vector<std::string> tokenize_words(std::string_view text);

class GloveEncoder {
 public:
  static Result<GloveEncoder> fit(const std::vector<std::string>& documents,
                                  const WordVectors& vectors, GloveWeighting weighting);
  std::size_t dim() const { return vectors_->dim(); }
  std::vector<float> encode(std::string_view text) const;
  // "glove-idf-v1/100/<corpus words>" or "glove-sif-v1/100/<corpus words>"
  std::string id() const;

 private:
  double weight(const std::string& word) const;
  const WordVectors* vectors_ = nullptr;
  GloveWeighting weighting_ = GloveWeighting::kSif;
  std::unordered_map<std::string, double> weights_;
  double unseen_weight_ = 1.0;
  std::vector<double> principal_;  // SIF: unit first principal component (empty for idf)
};

}  // namespace privsearch::index
