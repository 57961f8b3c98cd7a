// One version of an index, opened once. open() reads the manifest, runs the caller's
// trust check on it before anything else is read (a client pins the operator's signing key,
// client/trusted_index.h), verifies the hashes of exactly the artifacts its role reads, and
// hands out typed views merged over the update generations (index/artifacts/append.h) with their
// tombstones applied. It is the one place that knows which artifacts make up a version and how
// generations stack up for SearchClient, the provider (ProviderProcess::load), the tools (update,
// client-files, evaluate), the benches, the experiments and Python. Only the writers below this
// layer (index/artifacts/append.h, index/artifacts/client_files.h) read the manifest themselves.
//
// Roles. kClient reads the public artifacts a client copy holds (the projection, one candidate
// index, and when present the encoder, the payloads and the access-private layout + hint); a
// client's copy may leave optional ones out (holds()). kProvider reads what the provider serves
// (payloads, IVF lists, the scoring matrix); the exact rows are opened by index::ExactRows,
// which checks each row segment against its hash as it serves it. kTool is a command, bench or
// experiment that reads a few artifacts of its own choosing: open() hashes only the tombstones
// (deleted() holds), and every typed view, verified_path() and exact_store() hash the artifact
// they read when they read it. The IVF list files ivf() names are not hashed by any role: their
// reader (index::IvfListStore) checks each list segment against its hash as it serves it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "index/artifacts/doc_ids.h"
#include "index/artifacts/exact_store.h"
#include "index/artifacts/manifest.h"
#include "index/artifacts/payload_store.h"
#include "index/artifacts/record_digests.h"
#include "index/candidates/ivf.h"
#include "index/candidates/pq.h"
#include "index/candidates/projection.h"
#include "index/encoders/text_encoder.h"
#include "scoring/layout.h"

namespace privsearch::version {

enum class Role { kClient, kProvider, kTool };
// Which candidate index a client scans: the flat PQ artifact or the IVF lists; kAuto takes the
// flat one when the directory holds it.
enum class CandidateIndex { kAuto, kFlat, kIvf };

struct OpenSpec {
  Role role = Role::kClient;
  CandidateIndex candidates = CandidateIndex::kAuto;  // kClient only
  // Called with the manifest before any artifact is read or hashed; an error refuses the open.
  std::function<Status(const std::filesystem::path& dir, const index::Manifest&)> check_trust;
  // kProvider: the version served now, if any. Artifacts it already verified and that the new
  // manifest names with the same file, hash and size are not hashed again (a reload).
  const index::Manifest* served = nullptr;
};

// A tool's spec (Role::kTool, no trust check: a tool runs on the operator's own directory).
OpenSpec tool_spec();

// The flat PQ codes of the base and of every update generation, under one codebook.
struct FlatCodes {
  index::PqCodebook codebook;
  std::vector<index::PqArtifact> generations;  // [0] the base; ids continue across them
};

// The IVF directory with every generation's additions, and the list files the provider serves.
struct IvfWithLists {
  index::IvfIndex ivf;
  std::filesystem::path base_lists;                // empty when the index has none
  std::vector<std::filesystem::path> delta_lists;  // generation g at [g - 1]
};

// The access-private scoring artifacts a client reads (public): the layout and the hint.
struct PrivateScoringArtifacts {
  scoring::ScoringLayout layout;
  scoring::ScoringHint hint;
};

class IndexVersion {
 public:
  static Result<IndexVersion> open(const std::filesystem::path& dir, const OpenSpec& spec);

  const std::filesystem::path& dir() const { return dir_; }
  const index::Manifest& manifest() const { return manifest_; }
  const std::string& version_id() const { return manifest_.version_id; }
  // kClient: the candidate index chosen (kFlat or kIvf); kProvider: kAuto.
  CandidateIndex candidates() const { return candidates_; }
  std::uint32_t generations() const { return generations_; }
  // Every update's tombstones, ascending.
  const std::vector<std::uint32_t>& deleted() const { return deleted_; }
  // Listed in the manifest and present in the directory (a client's copy may leave some out).
  bool holds(std::string_view name) const;
  // The file of artifact `name`; kNotFound naming it when the manifest does not list it.
  Result<std::filesystem::path> path_of(std::string_view name) const;
  // path_of(name) after hashing the file against the manifest (kDataLoss naming it when it
  // differs): what a kTool reads by name.
  Result<std::filesystem::path> verified_path(std::string_view name) const;

  Result<index::Projection> projection() const;
  Result<FlatCodes> flat_codes() const;  // checked: one codebook, documents as listed
  Result<IvfWithLists> ivf() const;      // checked against the manifest (index/candidates/ivf.h)
  Result<std::unique_ptr<index::TextEncoder>> encoder() const;  // kNotFound when not held
  // Every generation's records, the tombstoned ones erased; kNotFound when not held.
  Result<index::PayloadStore> payloads() const;
  // The payload records' digests (index/artifacts/record_digests.h) over every generation, a
  // tombstoned record's the zero record's; `record_bytes` is the payload records' size
  // (index::payload_shape). kNotFound when not held (an index built before them).
  Result<index::RecordDigests> payload_digests(std::size_t record_bytes) const;
  // Every row's document id (index/artifacts/doc_ids.h), over the generations (deleted rows keep
  // theirs: they are never results); kNotFound for an index built before ids.
  Result<index::DocIds> doc_ids() const;
  // kNotFound when the directory does not hold both; kFailedPrecondition when the layout does
  // not describe this collection.
  Result<PrivateScoringArtifacts> private_scoring() const;
  // kProvider: the scoring matrix checked against its layout; kNotFound when not listed.
  Result<scoring::ScoringMatrix> scoring_matrix() const;
  // The base's exact store (the projected document rows), hashed whole: for evaluation against
  // exact inner products (a tool; a client never has it). kNotFound when not listed.
  Result<index::ExactStore> exact_store() const;

 private:
  IndexVersion() = default;
  Status verify_for(const OpenSpec& spec);
  // The file a typed view reads: verified_path() for a kTool (it hashed nothing at open),
  // path_of() for the roles that hashed what they read at open.
  Result<std::filesystem::path> file_of(std::string_view name) const;
  // A per-record table (the payload store, its digests) over every generation: the base's,
  // then each generation's that has one, appended and checked against the manifest's
  // documents (`what` names it in the error).
  template <typename Table>
  Result<Table> merged_records(const char* name, const char* what) const;
  Role role_ = Role::kClient;
  std::filesystem::path dir_;
  index::Manifest manifest_;
  CandidateIndex candidates_ = CandidateIndex::kAuto;
  std::uint32_t generations_ = 0;
  std::vector<std::uint32_t> deleted_;
};

}  // namespace privsearch::version
