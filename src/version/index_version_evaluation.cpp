// IndexVersion's evaluation-only view, in a file of its own: the browser build compiles
// index_version.cpp but not the exact store (its half-precision rows have no WebAssembly type),
// and no client ever reads it.
#include "index/artifacts/artifact_names.h"
#include "version/index_version.h"

namespace privsearch::version {

Result<index::ExactStore> IndexVersion::exact_store() const {
  if (manifest_.find(index::kExactStoreArtifact) == nullptr) {
    return not_found_error("the index has no exact store");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto file, verified_path(index::kExactStoreArtifact));
  return index::ExactStore::open(file);
}

}  // namespace privsearch::version
