// Updates without a rebuild: new documents land in new segments of the index, deleted
// ones become tombstones, and nothing already written changes.
//
// Generation g >= 1 of an index adds (names from generation_artifact(),
// index/artifacts/manifest.h):
//   exact_store.g  exact_store.g.bin  the new documents' projected rows (private; the base's
//                                     value type), ids N_{g-1} .. N_g - 1
//   payloads.g     payloads.g.bin     their payload records (the base's record size), with
//                                     payload_digests.g and doc_ids.g (their ids)
//   pq.g           pq.g.bin           their flat PQ codes (the base codebook), when the index
//                                     has a flat artifact
//   ivf_lists.g /  (index/candidates/ivf.h)      their IVF list additions, when the index has IVF
//   lists (in ivf_delta.g                       every generation, empty for deletions only)
//   tombstones.g   tombstones.g.bin   ids deleted in this generation ("PSTB", u16 1, u16 0,
//                                     u32 generation, u32 0, u64 count, count u32 ids ascending)
// The projection, the PQ codebook and the IVF centroids stay fixed (an explicit re-train is a
// rebuild). The new manifest lists the old artifacts (their hashes kept, the files untouched) and
// the new ones; its `documents` counts every row ever appended (deleted ones included: ids are
// never reused). With a signing key it is signed as the next version of the chain (sequence + 1,
// parent = the old version id), so a client that pinned the key accepts it and refuses the old
// one afterwards (client/trusted_index.h). Files are written atomically and the manifest last:
// an update that fails leaves the old version whole (a rerun overwrites the unlisted files).
// What a client downloads for an update: the manifest, its signature, ivf_delta.g (or pq.g for
// a flat client) and tombstones.g; list segments are fetched when probed.
// The provider keeps serving the old version's open files (a stale client gets old rows, never
// wrong ones) and opens only the new segments on reload.
// Thread safety: free functions; one update of a directory at a time (an exclusive lock on
// `<dir>/.update.lock`; a concurrent update is kFailedPrecondition).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "index/artifacts/manifest.h"
#include "index/artifacts/signing_key.h"
#include "index/artifacts/tombstones.h"
#include "index/build.h"
#include "index/encoders/beir.h"
#include "index/vectors_io.h"

namespace privsearch::index {

struct AppendInput {
  Matrix vectors;                      // raw embeddings (input dimension) of the new documents
  std::vector<Document> documents;     // their payloads, in the same order (one per row)
  std::vector<std::uint64_t> deleted;  // rows of existing documents to delete
  // Document ids (doc_ids.h) of existing documents to delete. A new document whose id the index
  // holds replaces that document (an upsert: the old row is deleted in the same generation).
  std::vector<std::string> delete_ids;
  // Access-private scoring's cluster layout covers every document and cannot take an append:
  // without this an index that has it is refused; with it the new version leaves it out (its
  // clients search in candidate mode until a rebuild).
  bool drop_access_private = false;
};

struct AppendResult {
  Manifest manifest;
  std::uint32_t generation = 0;
  std::uint64_t appended = 0, deleted = 0;
  std::uint64_t replaced = 0;  // of `deleted`: rows whose id a new document took (upserts)
  // Bytes an updating client downloads: the manifest (and signature), the flat client's pq.g,
  // the IVF client's ivf_delta.g, and tombstones.g.
  std::uint64_t flat_client_bytes = 0, ivf_client_bytes = 0;
};

// Adds generation index_generations(manifest) + 1 to the index in `dir`. kInvalidArgument for
// rows of the wrong dimension, a document count that differs from the rows, a deleted row that
// is not an existing document, a deleted id that names no live document, or an id added twice
// in one update (each named); kFailedPrecondition for delete_ids on an index built before ids;
// kFailedPrecondition for an index with access-private scoring (unless drop_access_private) or with
// nothing to do. `signing_key`: sign the new manifest as the next version of the chain.
Result<AppendResult> append_to_index(const std::filesystem::path& dir, const AppendInput& input,
                                     const Ed25519SigningKey* signing_key,
                                     const Progress& progress = {});

}  // namespace privsearch::index
