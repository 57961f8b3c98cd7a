// Binary files of the public index artifacts: the projection (mu, V) and the PQ artifact
// (codebook + codes). Both start with a 32-byte header — magic ("PSPJ" / "PSPQ"), u16
// version 1, u16 0, then sizes — and are written atomically; readers check magic, version,
// declared sizes against the file size before allocating, finite values, and no trailing bytes.
#pragma once

#include <filesystem>

#include "core/bytes.h"
#include "core/status.h"
#include "index/candidates/pq.h"
#include "index/candidates/projection.h"

namespace privsearch::index {

Status save_projection(const std::filesystem::path& file, const Projection& p);
Result<Projection> load_projection(const std::filesystem::path& file);
Status save_pq(const std::filesystem::path& file, const PqArtifact& a);
Result<PqArtifact> load_pq(const std::filesystem::path& file);

// The pieces of every artifact file above (and index/candidates/ivf.h): the magic and version 1
// header, float arrays (little-endian float32; the reader refuses non-finite values, naming
// `what`).
void put_header(ByteWriter& w, const char magic[4]);
Status read_header(ByteReader& r, const char magic[4], const std::filesystem::path& file);
void put_floats(ByteWriter& w, std::span<const float> v);
Status get_floats(ByteReader& r, std::span<float> out, const char* what);

}  // namespace privsearch::index
