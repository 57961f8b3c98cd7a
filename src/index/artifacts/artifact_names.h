// The names of an index version's artifacts in its manifest (index/artifacts/manifest.h), in one
// place. An update generation g >= 1 adds its own under generation_artifact(name, g)
// (index/artifacts/manifest.h, index/artifacts/append.h); the IVF, tombstone and access-private
// scoring names live beside their formats (index/candidates/ivf.h, index/artifacts/tombstones.h,
// scoring/layout.h).
#pragma once

namespace privsearch::index {

inline constexpr char kProjectionArtifact[] = "projection";   // mu and V (public)
inline constexpr char kPqArtifact[] = "pq";                   // flat PQ codebook + codes (public)
inline constexpr char kEncoderArtifact[] = "encoder";         // the text encoder (public)
inline constexpr char kPayloadsArtifact[] = "payloads";       // document records (PIR database)
inline constexpr char kExactStoreArtifact[] = "exact_store";  // exact rows (provider only)

}  // namespace privsearch::index
