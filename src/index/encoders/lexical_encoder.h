// The built-in lexical encoder ("lexical-jl"): BM25 term vectors of the corpus, mapped to a
// dense d-dimensional space by a seeded random sign projection (Johnson-Lindenstrauss,
// Achlioptas 2003), so that <encode_query(q), encode_document(d)> estimates BM25(q, d).
//
// Two choices reduce the projection's noise, whose standard deviation is |q| |d| / sqrt(dim)
// while the exact score is unchanged: documents keep only their `doc_terms` highest-weighted
// terms, and idf^alpha moves from the document side to the query side. The third is the
// dimension itself; the SVD projection to d' (672) then keeps the corpus's main directions.
// Measured (exact raw / exact projected d' = 672 / PQ + plaintext rerank K = 100, nDCG@10):
//   dim   SciFact                 Cranfield
//   768   0.583 / 0.581 / 0.582   0.290 / 0.294 / 0.294
//   1024  0.607 / 0.592 / 0.593   0.305 / 0.307 / 0.307
//   1536  0.633 / 0.586 / 0.587   0.320 / 0.323 / 0.322
//   2048  0.635 / 0.592 / 0.592   0.321 / 0.326 / 0.326   <- default
// (BM25: SciFact 0.6685, Cranfield 0.328; LSI-768 of the same BM25 vectors: SciFact 0.494.)
// Cost of 2048: the encoder output (N x 2048 floats at build time) and the projection artifact
// (2048 x d' floats, 5.5 MB); the provider's store and the client's PQ codes depend on d' only.
// Term t's row of the projection is a sign vector derived from (seed, t): nothing of size
// vocabulary x dim is stored. The fitted state (vocabulary, idf, average length, settings) is
// the encoder's artifact and its id names it.
// Thread safety: immutable after fit.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "index/encoders/beir.h"
#include "index/encoders/text.h"
#include "index/encoders/text_encoder.h"
#include "index/vectors_io.h"

namespace privsearch::index {

struct LexicalEncoderConfig {
  std::size_t dim = 2048;  // chosen by the measurements above
  std::size_t doc_terms = 48;
  double alpha = 0.5;
  std::uint64_t seed = 1;
};

class LexicalEncoder : public TextEncoder {
 public:
  static LexicalEncoder fit(const std::vector<std::string>& documents,
                            const LexicalEncoderConfig& config);
  std::size_t dim() const override { return config_.dim; }
  std::vector<float> encode_document(std::string_view text) const;
  std::vector<float> encode_query(std::string_view text) const override;
  // "lexical-jl-v1/<dim>/<doc_terms>/<alpha>/<seed>/<vocabulary size>"
  std::string id() const override;

  // The encoder artifact (public: what a client needs to encode queries). Format: magic "PSLE",
  // u16 version 1, u32 dim, u32 doc_terms, f64 alpha, u64 seed, then the BM25 query-side state
  // (Bm25Model::save). Written atomically; load() checks every field and that nothing trails.
  Status save(const std::filesystem::path& file) const;
  static Result<LexicalEncoder> load(const std::filesystem::path& file);

 private:
  std::vector<float> project(const SparseVector& v) const;
  LexicalEncoderConfig config_;
  Bm25Model bm25_;
};

// The built-in encoder fitted on `docs` (title + " " + text) and every document encoded: row i
// of `vectors` is document i.
struct EncodedCorpus {
  LexicalEncoder encoder;
  Matrix vectors;
};
EncodedCorpus fit_and_encode(const std::vector<Document>& docs,
                             const LexicalEncoderConfig& config = {});

}  // namespace privsearch::index
