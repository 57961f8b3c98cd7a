// Text processing for the built-in lexical encoders: tokenization, a light suffix stemmer,
// vocabulary with document frequencies, and BM25 weights (Robertson & Zaragoza 2009).
//
// Tokens: lowercase ASCII letters and digits, split on everything else (UTF-8 bytes >= 0x80 are
// kept inside tokens), English stopwords removed, plural/-ing/-ed suffixes stripped.
// BM25 of query q against document d: sum over q's terms t of
//   idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl)),
//   idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)).
// A document's BM25 vector has those per-term weights; a query's vector counts its terms, so
// the sparse dot product is the BM25 score.
// Thread safety: a fitted Bm25Model is immutable.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/bytes.h"
#include "core/status.h"

namespace privsearch::index {

std::vector<std::string> tokenize(std::string_view text);

// Sparse vector: (term id, weight), sorted by term id.
using SparseVector = std::vector<std::pair<std::uint32_t, float>>;

class Bm25Model {
 public:
  // Fits the vocabulary and statistics on the documents (title + " " + text).
  static Bm25Model fit(const std::vector<std::string>& documents, double k1 = 0.9, double b = 0.4);

  std::size_t vocabulary_size() const { return idf_.size(); }
  std::size_t documents() const { return doc_vectors_.size(); }
  const SparseVector& document_vector(std::size_t i) const { return doc_vectors_[i]; }
  // Term counts of the query's known terms.
  SparseVector query_vector(std::string_view query) const;
  // BM25 weights of a new document's known terms, with the fitted idf and average length.
  SparseVector weigh_document(std::string_view text) const;
  // Term id or -1.
  std::int64_t term_id(const std::string& term) const;
  double idf(std::uint32_t term) const { return idf_[term]; }
  static double dot(const SparseVector& a, const SparseVector& b);

  // The query-side state (vocabulary in id order, idf, k1, b, average length); document
  // vectors are not saved. load() caps the vocabulary at 2^24 terms of <= 256 bytes each,
  // rejects duplicate terms and non-finite or negative statistics.
  void save(ByteWriter& w) const;
  static Result<Bm25Model> load(ByteReader& r);

 private:
  std::unordered_map<std::string, std::uint32_t> vocab_;
  std::vector<double> idf_;
  double k1_ = 0.9, b_ = 0.4, avgdl_ = 1;
  std::vector<SparseVector> doc_vectors_;
};

}  // namespace privsearch::index
