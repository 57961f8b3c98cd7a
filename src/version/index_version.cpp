#include "version/index_version.h"

#include <fmt/format.h>

#include "index/artifacts/artifact_names.h"
#include "index/artifacts/artifacts.h"
#include "index/artifacts/atomic_file.h"
#include "index/artifacts/tombstones.h"
#include "index/encoders/word_vectors.h"

namespace privsearch::version {
namespace {

using index::generation_artifact;

// The candidate index a client directory supports (OpenSpec::candidates).
Result<CandidateIndex> choose_candidates(const IndexVersion& v, CandidateIndex wanted) {
  const bool flat = v.holds(index::kPqArtifact), ivf = v.holds(index::kIvfArtifact);
  if (wanted == CandidateIndex::kAuto) {
    if (flat) return CandidateIndex::kFlat;
    if (ivf) return CandidateIndex::kIvf;
  }
  if (wanted == CandidateIndex::kFlat && flat) return CandidateIndex::kFlat;
  if (wanted == CandidateIndex::kIvf && ivf) return CandidateIndex::kIvf;
  if (wanted == CandidateIndex::kIvf && v.manifest().find(index::kIvfArtifact) == nullptr) {
    return Status(StatusCode::kNotFound,
                  "this index has no IVF lists (build it with --ivf on) : use the flat artifact");
  }
  return Status(
      StatusCode::kNotFound,
      fmt::format("`{}` holds {}: copy the index's client files (privsearch "
                  "client-files --candidate-index ...) or point at the index directory",
                  v.dir().string(),
                  wanted == CandidateIndex::kIvf ? "no IVF directory file (ivf.bin)"
                  : wanted == CandidateIndex::kFlat
                      ? "no PQ artifact file (pq.bin)"
                      : "neither the PQ artifact (pq.bin) nor the IVF directory (ivf.bin)"));
}

// What a client reads: the projection, its candidate index with every generation's additions,
// the tombstones, and the optional artifacts its directory holds (payloads with their
// generations only when it holds the base's).
std::vector<std::string> client_artifacts(const IndexVersion& v, bool use_ivf) {
  const auto& man = v.manifest();
  std::vector<std::string> needed{index::kProjectionArtifact,
                                  use_ivf ? index::kIvfArtifact : index::kPqArtifact};
  for (const char* optional :
       {index::kEncoderArtifact, index::kPayloadsArtifact, index::kPayloadDigestsArtifact,
        index::kDocIdsArtifact, scoring::kLayoutArtifact, scoring::kHintArtifact}) {
    if (v.holds(optional)) needed.emplace_back(optional);
  }
  for (std::uint32_t g = 1; g <= v.generations(); ++g) {
    needed.push_back(generation_artifact(index::kTombstonesArtifact, g));
    const auto addition =
        generation_artifact(use_ivf ? index::kIvfDeltaArtifact : index::kPqArtifact, g);
    if (man.find(addition) != nullptr) needed.push_back(addition);
    for (const char* tier :
         {index::kPayloadsArtifact, index::kPayloadDigestsArtifact, index::kDocIdsArtifact}) {
      const auto generation = generation_artifact(tier, g);
      if (v.holds(tier) && man.find(generation) != nullptr) needed.push_back(generation);
    }
  }
  return needed;
}

// What a provider hashes: everything, but on a reload not what the served version verified
// already under the same file, hash and size. The exact stores and list files are checked row by
// row and segment by segment as they are served; the client artifacts (flat PQ, projection,
// encoder, hint) the provider never reads.
std::vector<std::string> provider_artifacts(const index::Manifest& man,
                                            const index::Manifest* served) {
  std::vector<std::string> verify;
  for (const auto& a : man.artifacts) {
    const bool reused = a.name.starts_with(index::kExactStoreArtifact) ||
                        a.name.starts_with(index::kIvfListsArtifact);
    const bool unread = a.name.starts_with(index::kPqArtifact) ||
                        a.name == index::kProjectionArtifact || a.name == index::kEncoderArtifact ||
                        a.name == scoring::kHintArtifact;
    const auto* before = served != nullptr ? served->find(a.name) : nullptr;
    if ((reused || unread) && before != nullptr && before->file == a.file &&
        before->sha256 == a.sha256 && before->bytes == a.bytes) {
      continue;
    }
    verify.push_back(a.name);
  }
  return verify;
}

// A tool hashes at open only the tombstones that deleted() reads; the rest when it reads it.
std::vector<std::string> tool_artifacts(const IndexVersion& v) {
  std::vector<std::string> tombstones;
  for (std::uint32_t g = 1; g <= v.generations(); ++g) {
    tombstones.push_back(generation_artifact(index::kTombstonesArtifact, g));
  }
  return tombstones;
}

}  // namespace

OpenSpec tool_spec() {
  OpenSpec spec;
  spec.role = Role::kTool;
  return spec;
}

Result<IndexVersion> IndexVersion::open(const std::filesystem::path& dir, const OpenSpec& spec) {
  IndexVersion v;
  v.dir_ = dir;
  v.role_ = spec.role;
  // Hashes are checked below, for the artifacts this role reads (a client's copy may leave
  // some out, and the exact stores are the provider's alone).
  PRIVSEARCH_ASSIGN_OR_RETURN(v.manifest_, index::load_manifest(dir, /*verify=*/false));
  if (spec.check_trust) PRIVSEARCH_RETURN_IF_ERROR(spec.check_trust(dir, v.manifest_));
  v.generations_ = index::index_generations(v.manifest_);
  PRIVSEARCH_RETURN_IF_ERROR(v.verify_for(spec));
  PRIVSEARCH_ASSIGN_OR_RETURN(v.deleted_, index::load_tombstones(dir, v.manifest_));
  return v;
}

Status IndexVersion::verify_for(const OpenSpec& spec) {
  if (spec.role == Role::kProvider) {
    const auto verify = provider_artifacts(manifest_, spec.served);
    return verify.empty() ? Status() : index::verify_artifacts(dir_, manifest_, verify);
  }
  if (spec.role == Role::kTool) {
    // verify_artifacts with an empty list hashes every artifact: a base-only index has none.
    const auto tombstones = tool_artifacts(*this);
    return tombstones.empty() ? Status() : index::verify_artifacts(dir_, manifest_, tombstones);
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(candidates_, choose_candidates(*this, spec.candidates));
  return index::verify_artifacts(dir_, manifest_,
                                 client_artifacts(*this, candidates_ == CandidateIndex::kIvf));
}

bool IndexVersion::holds(std::string_view name) const {
  const auto* e = manifest_.find(std::string(name));
  std::error_code ec;
  return e != nullptr && std::filesystem::exists(dir_ / e->file, ec);
}

Result<std::filesystem::path> IndexVersion::path_of(std::string_view name) const {
  const auto* e = manifest_.find(std::string(name));
  if (e == nullptr) {
    return Status(StatusCode::kNotFound, fmt::format("the index has no `{}` artifact", name));
  }
  return dir_ / e->file;
}

Result<std::filesystem::path> IndexVersion::verified_path(std::string_view name) const {
  PRIVSEARCH_ASSIGN_OR_RETURN(auto file, path_of(name));
  PRIVSEARCH_RETURN_IF_ERROR(index::verify_artifacts(dir_, manifest_, {std::string(name)}));
  return file;
}

Result<std::filesystem::path> IndexVersion::file_of(std::string_view name) const {
  return role_ == Role::kTool ? verified_path(name) : path_of(name);
}

Result<index::Projection> IndexVersion::projection() const {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto file, file_of(index::kProjectionArtifact));
  return index::load_projection(file);
}

Result<FlatCodes> IndexVersion::flat_codes() const {
  FlatCodes out;
  std::uint64_t documents = 0;
  for (std::uint32_t g = 0; g <= generations_; ++g) {
    const auto name = generation_artifact(index::kPqArtifact, g);
    if (g > 0 && manifest_.find(name) == nullptr) continue;  // deletions only
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto file, file_of(name));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto pq, index::load_pq(file));
    if (g == 0) {
      out.codebook = pq.codebook;
    } else if (pq.codebook.m != out.codebook.m || pq.codebook.centroids != out.codebook.centroids) {
      return Status(
          StatusCode::kDataLoss,
          fmt::format("`{}`: update {} has another PQ codebook than the base", file.string(), g));
    }
    documents += pq.count;
    out.generations.push_back(std::move(pq));
  }
  if (documents != manifest_.documents) {
    return Status(StatusCode::kDataLoss,
                  fmt::format("the PQ artifacts hold {} documents; the manifest lists {}",
                              documents, manifest_.documents));
  }
  return out;
}

Result<IvfWithLists> IndexVersion::ivf() const {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto directory, file_of(index::kIvfArtifact));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto ivf, index::load_ivf(directory));
  IvfWithLists out{std::move(ivf), {}, {}};
  const bool lists = manifest_.find(index::kIvfListsArtifact) != nullptr;
  if (lists) out.base_lists = *path_of(index::kIvfListsArtifact);
  for (std::uint32_t g = 1; g <= generations_; ++g) {
    const auto delta = generation_artifact(index::kIvfDeltaArtifact, g);
    if (manifest_.find(delta) == nullptr) continue;  // deletions only
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto file, file_of(delta));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, index::read_file_bytes(file));
    PRIVSEARCH_RETURN_IF_ERROR(index::add_ivf_delta(out.ivf, bytes, file));
    if (!lists) continue;
    auto segments = path_of(generation_artifact(index::kIvfListsArtifact, g));
    if (!segments.ok()) {
      return Status(StatusCode::kDataLoss,
                    fmt::format("generation {} lists IVF additions without their segments", g));
    }
    out.delta_lists.push_back(std::move(segments).value());
  }
  PRIVSEARCH_RETURN_IF_ERROR(index::check_ivf_matches(out.ivf, manifest_));
  return out;
}

Result<std::unique_ptr<index::TextEncoder>> IndexVersion::encoder() const {
  if (!holds(index::kEncoderArtifact)) return not_found_error("the index holds no text encoder");
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto file, file_of(index::kEncoderArtifact));
  return index::load_text_encoder(file, index::default_word_vectors_path());
}

template <typename Table>
Result<Table> IndexVersion::merged_records(const char* name, const char* what) const {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto base, file_of(name));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto table, Table::open(base));
  for (std::uint32_t g = 1; g <= generations_; ++g) {
    const auto generation = generation_artifact(name, g);
    if (manifest_.find(generation) == nullptr) continue;
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto file, file_of(generation));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto more, Table::open(file));
    PRIVSEARCH_RETURN_IF_ERROR(table.append(more));
  }
  if (table.records() != manifest_.documents) {
    return Status(StatusCode::kDataLoss,
                  fmt::format("the {} hold {} records; the manifest lists {} documents", what,
                              table.records(), manifest_.documents));
  }
  return table;
}

Result<index::PayloadStore> IndexVersion::payloads() const {
  if (!holds(index::kPayloadsArtifact)) {
    return not_found_error("the index lists no payloads (or this copy leaves them out)");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(auto payloads, merged_records<index::PayloadStore>(
                                                 index::kPayloadsArtifact, "payload stores"));
  for (const auto id : deleted_) payloads.erase(id);
  return payloads;
}

Result<index::RecordDigests> IndexVersion::payload_digests(std::size_t record_bytes) const {
  if (!holds(index::kPayloadDigestsArtifact)) {
    return not_found_error("the index lists no payload record digests (built before them)");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(auto digests, merged_records<index::RecordDigests>(
                                                index::kPayloadDigestsArtifact, "record digests"));
  for (const auto id : deleted_) digests.erase(id, record_bytes);
  return digests;
}

Result<index::DocIds> IndexVersion::doc_ids() const {
  if (!holds(index::kDocIdsArtifact)) {
    return not_found_error("the index lists no document ids (built before them)");
  }
  return merged_records<index::DocIds>(index::kDocIdsArtifact, "document id tables");
}

Result<PrivateScoringArtifacts> IndexVersion::private_scoring() const {
  if (!holds(scoring::kLayoutArtifact) || !holds(scoring::kHintArtifact)) {
    return not_found_error("the index holds no access-private scoring layout and hint");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto layout_file, file_of(scoring::kLayoutArtifact));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto layout, scoring::load_layout(layout_file));
  // A's seed is a hash of the layout's salt (derived by parse_layout, never read from the
  // file): a provider cannot have chosen A itself (a trapdoor).
  if (layout.shape.documents != manifest_.documents || layout.shape.dim > manifest_.dim) {
    return Status(StatusCode::kFailedPrecondition,
                  "the scoring layout does not match the manifest's collection");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto hint_file, file_of(scoring::kHintArtifact));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto hint, scoring::load_hint(hint_file));
  return PrivateScoringArtifacts{std::move(layout), std::move(hint)};
}

Result<scoring::ScoringMatrix> IndexVersion::scoring_matrix() const {
  if (manifest_.find(scoring::kMatrixArtifact) == nullptr) {
    return not_found_error("the index has no access-private scoring matrix");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto layout_file, file_of(scoring::kLayoutArtifact));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto layout, scoring::load_layout(layout_file));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto matrix_file, file_of(scoring::kMatrixArtifact));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto matrix, scoring::load_matrix(matrix_file));
  if (matrix.rows != layout.shape.cluster_rows || matrix.columns != layout.shape.columns() ||
      layout.shape.documents != manifest_.documents) {
    return Status(StatusCode::kDataLoss, "the scoring matrix's shape differs from its layout");
  }
  return matrix;
}

}  // namespace privsearch::version
