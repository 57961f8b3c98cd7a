// A client's trust in the index it reads: the operator's pinned public key and a memory of the
// newest signed version seen, so a stale or forged index is refused before any search.
//
// With a pinned key (`privsearch search --trust-key FILE`), opening an index checks, in order:
//   1. manifest.sig verifies under the pinned key for this exact version id and sequence
//      (index/artifacts/manifest_signature.h: kNotFound unsigned, kDataLoss damaged,
//      kUnauthenticated wrong key / version / signature);
//   2. the sequence is in a chain (>= 1) and not older than the newest this client has seen
//      for that key (kFailedPrecondition "rollback"); the same sequence with another version id
//      is refused too (kFailedPrecondition "fork": the key signed two different indexes as one
//      version);
//   3. then the memory records the new (sequence, version).
// The memory is a small JSON file ({"format": 1, "keys": {key_id: {"sequence", "version_id"}}}),
// updated atomically under an exclusive lock on `<file>.lock`; a file that cannot be read or
// parsed fails closed (kDataLoss naming it) rather than forgetting what was seen.
// Default file: $PRIVSEARCH_STATE_DIR/seen-manifests.json, else
// $HOME/.local/state/privsearch/seen-manifests.json.
// Thread safety: free functions; concurrent processes serialize on the lock file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "core/status.h"
#include "index/artifacts/manifest.h"

namespace privsearch::client {

struct IndexTrust {
  std::filesystem::path public_key;     // empty: no pinning (any index, signed or not)
  std::filesystem::path seen_versions;  // empty: default_seen_versions_path()
};

std::filesystem::path default_seen_versions_path();

// Steps 1-3 above; nothing when trust.public_key is empty.
Status check_index_trust(const std::filesystem::path& index_dir, const index::Manifest& manifest,
                         const IndexTrust& trust);

}  // namespace privsearch::client
