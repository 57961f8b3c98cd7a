// A fast 64-bit fingerprint for "has this verified data changed since": four independent lanes
// over 64-bit words (multiply by odd constants, fold the high half down), then combined; ~10x the
// speed of SHA-256. Not cryptographic: it guards data a process hashed with SHA-256 at load (an
// exact-store row, an IVF list segment) against changes on disk while it serves them, where the
// adversary, if any, is whoever can write the file and could serve anything; clients check what
// reaches them against SHA-256 digests they trust.
// Thread safety: pure.
#pragma once

#include <cstddef>
#include <cstdint>

namespace privsearch {

// `seed` separates uses (the exact store passes its column count).
std::uint64_t fast_hash(const void* data, std::size_t bytes, std::uint64_t seed = 0);

}  // namespace privsearch
