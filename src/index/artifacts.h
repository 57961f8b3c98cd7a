// Binary files of the public index artifacts: the projection (mu, V) and the PQ artifact
// (codebook + codes). Both start with a 32-byte header — magic ("PSPJ" / "PSPQ"), u16
// version 1, u16 0, then sizes — and are written atomically; readers check magic, version,
// declared sizes against the file size before allocating, finite values, and no trailing bytes.
#pragma once

#include <filesystem>

#include "core/status.h"
#include "index/pq.h"
#include "index/projection.h"

namespace privsearch::index {

Status save_projection(const std::filesystem::path& file, const Projection& p);
Result<Projection> load_projection(const std::filesystem::path& file);
Status save_pq(const std::filesystem::path& file, const PqArtifact& a);
Result<PqArtifact> load_pq(const std::filesystem::path& file);

}  // namespace privsearch::index
