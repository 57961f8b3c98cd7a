// `privsearch build`: the provider's offline index build from a BEIR collection and its
// precomputed document embeddings (a user's model of choice).
//
// Steps: load the corpus and the vectors (rows in corpus order, or named by an ID file), fit
// the projection on a seeded document sample, project every document (the private exact
// store), train the PQ artifact on a seeded sample (public), write the payload store, and
// finally the manifest with every artifact's SHA-256. Every file is written atomically; the
// manifest is written last, so an interrupted build never looks complete.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "index/artifacts/exact_store.h"
#include "index/artifacts/manifest.h"
#include "index/candidates/ivf.h"
#include "index/candidates/projection.h"
#include "index/encoders/beir.h"
#include "index/vectors_io.h"

namespace privsearch::index {

using Progress = std::function<void(const std::string& step)>;
// Artifacts derived from the projected vectors by a module above index (the access-private
// scoring database, scoring/build.h): called after the PQ artifact and before the manifest,
// writes its files into `out` atomically and returns their (name, file) entries.
using ExtraArtifacts = std::function<Result<std::vector<ArtifactEntry>>(
    const Matrix& projected, const std::filesystem::path& out, const Progress& progress)>;

struct BuildOptions {
  std::filesystem::path collection;   // BEIR directory
  std::filesystem::path doc_vectors;  // .npy or .fvecs; empty: use the built-in encoder
  // Built-in encoder when doc_vectors is empty: "lexical" fits LexicalEncoder on the corpus
  // (title + " " + text), encodes the documents, and saves the encoder as the public artifact
  // "encoder" (encoder.bin) so clients encode their queries the same way.
  std::string encoder = "lexical";
  // "glove-idf" / "glove-sif": the word-vector encoders on this file (default:
  // default_word_vectors_path(); `make glove` fetches it); the artifact pins its SHA-256.
  std::filesystem::path word_vectors;
  // Or document vectors already in memory (rows in corpus order; used when doc_vectors is
  // empty; not owned).
  const Matrix* vectors = nullptr;
  // Or the documents themselves instead of `collection` (ids and payload text; the Python
  // package builds from arrays this way; not owned).
  const std::vector<Document>* documents = nullptr;
  std::filesystem::path doc_ids;  // optional: one id per vector row
  // The index directory: the build writes a staging directory beside it and swaps it in only
  // when complete (index/artifacts/staged_directory.h), so a failed or killed build leaves an
  // existing index as it was. An existing `out` must be empty or an index directory.
  std::filesystem::path out;
  std::string encoder_id = "external";
  ProjectionKind projection = ProjectionKind::kSvd;
  std::size_t dim = 672;  // d' (capped at the embedding dimension)
  std::size_t pq_m = 0;   // 0 = d'/8 rounded to a divisor of d'
  std::size_t sample = 200000;
  // Payload record size; 0: chosen from the documents (record_bytes_for: every one whole). A
  // document longer than a record is cut, and the build says how many were (progress).
  std::size_t record_bytes = 2048;
  std::uint64_t seed = 1;
  // The IVF-partitioned public index (index/candidates/ivf.h) next to the flat PQ artifact: nlist
  // lists (0: default_ivf_lists(N) = N / 250), built when `ivf` is set; unset: built from
  // kIvfDefaultMinDocuments documents on (the flat download is small below).
  std::optional<bool> ivf;
  std::size_t ivf_lists = 0;
  std::size_t ivf_route_dim = 0;             // 0: kIvfDefaultRouteDim, capped at d'
  std::size_t ivf_spill = kIvfDefaultSpill;  // lists per document (IvfOptions::spill)
  std::size_t ivf_pq_m = 0;                  // the lists' PQ subquantizers (0: the flat artifact's)
  // The exact store's value type: float16 halves the provider's store (docs/SCALE.md measures
  // the rerank's quality on it).
  StoreDtype store_dtype = StoreDtype::kFloat32;
  ExtraArtifacts extra_artifacts;  // empty: none
  // Runs on the complete staging directory before it replaces `out` (signing: a build whose
  // signature fails replaces nothing); its error is the build's.
  std::function<Status(const std::filesystem::path& staged)> before_commit;
};

Result<Manifest> build_index(const BuildOptions& options, const Progress& progress);

}  // namespace privsearch::index
