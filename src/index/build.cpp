#include "index/build.h"

#include <fmt/format.h>

#include <functional>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

#include "index/artifacts/artifact_names.h"
#include "index/artifacts/artifacts.h"
#include "index/artifacts/doc_ids.h"
#include "index/artifacts/exact_store.h"
#include "index/artifacts/payload_store.h"
#include "index/artifacts/record_digests.h"
#include "index/artifacts/staged_directory.h"
#include "index/candidates/ivf.h"
#include "index/candidates/pq.h"
#include "index/encoders/beir.h"
#include "index/encoders/glove_encoder.h"
#include "index/encoders/lexical_encoder.h"
#include "index/vectors_io.h"

namespace privsearch::index {

namespace {

using Say = std::function<void(const std::string&)>;

// The document vectors: given in memory or as a file, or made by a built-in encoder (kept, so
// the index can encode queries).
struct DocumentVectors {
  Matrix vectors;
  std::optional<LexicalEncoder> lexical;
  std::optional<GloveEncoder> glove;
  bool has_encoder() const { return lexical.has_value() || glove.has_value(); }
};

Result<DocumentVectors> document_vectors(const BuildOptions& o, const std::vector<Document>& docs,
                                         const Say& say) {
  DocumentVectors v;
  if (o.doc_vectors.empty() && o.vectors != nullptr) {
    v.vectors = *o.vectors;
  } else if (o.doc_vectors.empty() && (o.encoder == "glove-idf" || o.encoder == "glove-sif")) {
    const auto path = o.word_vectors.empty() ? default_word_vectors_path() : o.word_vectors;
    say(fmt::format("fitting the {} encoder ({}) on {} documents", o.encoder, path.string(),
                    docs.size()));
    PRIVSEARCH_ASSIGN_OR_RETURN(
        auto encoded,
        fit_and_encode_glove(
            docs, path, o.encoder == "glove-idf" ? GloveWeighting::kIdf : GloveWeighting::kSif));
    v.glove.emplace(std::move(encoded.encoder));
    v.vectors = std::move(encoded.vectors);
  } else if (o.doc_vectors.empty()) {
    if (o.encoder != "lexical") {
      return invalid_argument_error(fmt::format(
          "unknown built-in encoder `{}` (known: lexical, glove-idf, glove-sif); or give "
          "document vectors",
          o.encoder));
    }
    say(fmt::format("fitting the built-in lexical encoder on {} documents", docs.size()));
    auto encoded = fit_and_encode(docs);
    v.lexical = std::move(encoded.encoder);
    v.vectors = std::move(encoded.vectors);
  } else {
    say(fmt::format("loading vectors {}", o.doc_vectors.string()));
    PRIVSEARCH_ASSIGN_OR_RETURN(v.vectors, load_vectors(o.doc_vectors));
  }
  return v;
}

// Rows of `vectors` (in the order of `ids_file`) reordered into corpus order by document id.
Result<Matrix> reorder_by_ids(const Matrix& vectors, const std::filesystem::path& ids_file,
                              const std::vector<Document>& docs) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto ids, load_ids(ids_file, vectors.rows));
  std::unordered_map<std::string, std::size_t> row_of;
  for (std::size_t i = 0; i < ids.size(); ++i) row_of.emplace(ids[i], i);
  Matrix ordered;
  ordered.rows = docs.size();
  ordered.cols = vectors.cols;
  ordered.data.resize(docs.size() * vectors.cols);
  for (std::size_t d = 0; d < docs.size(); ++d) {
    const auto it = row_of.find(docs[d].id);
    if (it == row_of.end()) {
      return data_loss_error(
          fmt::format("document `{}` has no vector in {}", docs[d].id, ids_file.string()));
    }
    std::copy_n(vectors.row(it->second), vectors.cols, ordered.data.data() + d * vectors.cols);
  }
  return ordered;
}

Result<Projection> fit_projection(const BuildOptions& o, const Matrix& vectors, std::size_t dim) {
  switch (o.projection) {
    case ProjectionKind::kSvd: {
      SvdOptions so;
      so.sample_size = o.sample;
      so.seed = o.seed;
      return fit_svd(vectors, dim, so);
    }
    case ProjectionKind::kFirstCoordinates:
      return first_coordinates(vectors, dim);
    case ProjectionKind::kGaussian:
      return gaussian_orthoprojector(vectors, dim, o.seed);
  }
  return invalid_argument_error("unknown projection kind");
}

Manifest make_manifest(const BuildOptions& o, const DocumentVectors& v, std::size_t documents,
                       std::size_t dim, std::size_t m) {
  Manifest man;
  man.collection = o.documents != nullptr ? "in-memory" : o.collection.filename().string();
  man.encoder_id = v.lexical ? v.lexical->id() : v.glove ? v.glove->id() : o.encoder_id;
  man.projection = std::string(projection_kind_name(o.projection));
  man.dtype = o.store_dtype == StoreDtype::kFloat16 ? "float16" : "float32";
  man.documents = documents;
  man.input_dim = v.vectors.cols;
  man.dim = dim;
  man.pq_m = m;
  man.seed = o.seed;
  man.artifacts = {{kProjectionArtifact, "projection.bin", 0, ""},
                   {kExactStoreArtifact, "exact.store", 0, ""},
                   {kPqArtifact, "pq.bin", 0, ""},
                   {kPayloadsArtifact, "payloads.bin", 0, ""},
                   {kPayloadDigestsArtifact, "payload_digests.bin", 0, ""},
                   {kDocIdsArtifact, "doc_ids.bin", 0, ""}};
  if (v.has_encoder()) man.artifacts.push_back({kEncoderArtifact, "encoder.bin", 0, ""});
  return man;
}

// Says how the payload records hold the documents: nothing is cut silently.
void report_record_fit(const std::vector<Document>& docs, std::size_t record_bytes,
                       const std::function<void(const std::string&)>& say) {
  const auto fit = record_fit(docs, record_bytes);
  const double mb = 1e-6 * static_cast<double>(docs.size());
  say(fmt::format("writing payload store: {} records of {} bytes ({:.1f} MB)", docs.size(),
                  record_bytes, mb * static_cast<double>(record_bytes)));
  if (fit.cut == 0) return;
  const std::size_t whole = record_bytes_for(docs);
  say(fmt::format(
      "warning: {} of {} documents are longer than a {}-byte record and are cut, ending in "
      "\"{}\" (the longest needs {} bytes); --record-bytes auto keeps every one whole in "
      "{}-byte records ({:.1f} MB of payloads instead of {:.1f})",
      fit.cut, docs.size(), record_bytes, kTruncatedMarker, fit.largest_record, whole,
      mb * static_cast<double>(whole), mb * static_cast<double>(record_bytes)));
}

// The payload records (`--record-bytes`, said how they fit), their digests, which a client
// checks every record it fetches against (record_digests.h), and the documents' ids (doc_ids.h).
Status write_payloads(const BuildOptions& o, const std::vector<Document>& docs,
                      const std::filesystem::path& out,
                      const std::function<void(const std::string&)>& say) {
  const std::size_t record_bytes = o.record_bytes != 0 ? o.record_bytes : record_bytes_for(docs);
  report_record_fit(docs, record_bytes, say);
  PRIVSEARCH_RETURN_IF_ERROR(PayloadStore::write(out / "payloads.bin", docs, record_bytes));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto written, PayloadStore::open(out / "payloads.bin"));
  PRIVSEARCH_RETURN_IF_ERROR(
      RecordDigests::write(out / "payload_digests.bin", written, /*first=*/0));
  std::vector<std::string> ids;
  ids.reserve(docs.size());
  for (const auto& d : docs) ids.push_back(d.id);
  return DocIds::write(out / "doc_ids.bin", ids, /*first=*/0);
}

// The build itself, every file into `out` (a staging directory: build_index below).
Result<Manifest> build_into(const BuildOptions& o, const std::filesystem::path& out,
                            const std::function<void(const std::string&)>& say) {
  std::vector<Document> docs;
  if (o.documents != nullptr) {
    // The checks load_corpus makes of a file: ids present and unique.
    std::set<std::string_view> seen;
    for (std::size_t i = 0; i < o.documents->size(); ++i) {
      const auto& id = (*o.documents)[i].id;
      if (id.empty()) return invalid_argument_error(fmt::format("document {} has an empty id", i));
      if (!seen.insert(id).second) {
        return invalid_argument_error(fmt::format("document id `{}` appears twice", id));
      }
    }
    docs = *o.documents;
  } else {
    say(fmt::format("loading corpus {}", o.collection.string()));
    PRIVSEARCH_ASSIGN_OR_RETURN(docs, load_corpus(o.collection / "corpus.jsonl"));
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(auto v, document_vectors(o, docs, say));
  if (!o.doc_ids.empty() && !v.has_encoder()) {
    PRIVSEARCH_ASSIGN_OR_RETURN(v.vectors, reorder_by_ids(v.vectors, o.doc_ids, docs));
  }
  const Matrix& vectors = v.vectors;
  if (vectors.rows != docs.size()) {
    return invalid_argument_error(
        fmt::format("{} vectors for {} documents (give --doc-ids to match rows to documents)",
                    vectors.rows, docs.size()));
  }
  const std::size_t dim = std::min(o.dim, vectors.cols);
  const std::size_t m = o.pq_m != 0 ? o.pq_m : default_pq_m(dim);
  say(fmt::format("fitting {} projection {} -> {} on up to {} documents",
                  projection_kind_name(o.projection), vectors.cols, dim, o.sample));
  PRIVSEARCH_ASSIGN_OR_RETURN(const Projection proj, fit_projection(o, vectors, dim));
  say(fmt::format("projecting {} documents", vectors.rows));
  const Matrix projected = proj.project_documents(vectors);
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec)
    return unavailable_error(fmt::format("cannot create `{}`: {}", out.string(), ec.message()));
  PRIVSEARCH_RETURN_IF_ERROR(save_projection(out / "projection.bin", proj));
  PRIVSEARCH_RETURN_IF_ERROR(ExactStore::write(out / "exact.store", projected, o.store_dtype));
  say(fmt::format("training PQ (M = {}) on up to {} vectors", m, o.sample));
  PqOptions po;
  po.m = m;
  po.train_size = o.sample;
  po.seed = o.seed;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto pq, build_pq(projected, po));
  PRIVSEARCH_RETURN_IF_ERROR(save_pq(out / "pq.bin", pq));
  std::vector<ArtifactEntry> ivf_entries;
  if (o.ivf.value_or(docs.size() >= kIvfDefaultMinDocuments)) {
    IvfOptions io;
    io.lists = o.ivf_lists;
    io.route_dim = std::min(o.ivf_route_dim != 0 ? o.ivf_route_dim : kIvfDefaultRouteDim, dim);
    io.train_size = o.sample;
    io.seed = o.seed;
    io.spill = o.ivf_spill;
    io.pq_m = o.ivf_pq_m;
    say(fmt::format("training {} IVF lists (routed on {} coordinates) and assigning {} documents",
                    io.lists != 0 ? io.lists : default_ivf_lists(docs.size()), io.route_dim,
                    docs.size()));
    PRIVSEARCH_ASSIGN_OR_RETURN(ivf_entries, build_ivf(projected, pq, io, out));
  }
  PRIVSEARCH_RETURN_IF_ERROR(write_payloads(o, docs, out, say));
  if (v.lexical) PRIVSEARCH_RETURN_IF_ERROR(v.lexical->save(out / "encoder.bin"));
  if (v.glove) PRIVSEARCH_RETURN_IF_ERROR(v.glove->save(out / "encoder.bin"));
  Manifest man = make_manifest(o, v, docs.size(), dim, m);
  man.artifacts.insert(man.artifacts.end(), ivf_entries.begin(), ivf_entries.end());
  if (o.extra_artifacts) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto extra, o.extra_artifacts(projected, out, say));
    man.artifacts.insert(man.artifacts.end(), extra.begin(), extra.end());
  }
  say("writing manifest");
  PRIVSEARCH_RETURN_IF_ERROR(write_manifest(out, man));
  return man;
}

}  // namespace

Result<Manifest> build_index(const BuildOptions& o, const Progress& progress) {
  auto say = [&](const std::string& s) {
    if (progress) progress(s);
  };
  PRIVSEARCH_ASSIGN_OR_RETURN(auto staged, StagedDirectory::begin(o.out));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto man, build_into(o, staged.path(), say));
  if (o.before_commit) PRIVSEARCH_RETURN_IF_ERROR(o.before_commit(staged.path()));
  PRIVSEARCH_RETURN_IF_ERROR(staged.commit());
  return man;
}

}  // namespace privsearch::index
