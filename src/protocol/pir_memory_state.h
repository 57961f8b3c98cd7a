// ZipPIR registrations and precomputed hints held by this process only: the PirSharedState of a
// provider without `--state redis://...`, so that PirService has one code path whether its
// replicas share state or not.
//
// The same guarantees as the Redis store (pir_shared_state.h): each query index of a client is
// handed out once (one counter per client, never reset while the process lives) and its hint
// taken at most once; a registration unused for `idle_expiry_s` is forgotten, and a full store
// (`max_clients`) evicts the least recently used one idle for `evict_idle_after_s` (else
// kResourceExhausted). Two things only a single process can do, kept from the in-process service:
//  - a forgotten registration is retired: its setup message is refused if it comes back
//    (kNotFound), so no query index of its is ever answered twice even after the counter is gone
//    (bounded memory of 65,536 retired ids, oldest first);
//  - work is scheduled fairly between owners (Caller::rate_key: identity, else address): the
//    next hint goes to the registration with the fewest hints ready or pending, among those to
//    the owner served longest ago, ties in round-robin order after the last one served. An owner
//    registering many clients (forged setups at the setup rate) gets one hint's turn like any
//    other, so a newcomer's first hint waits for at most the hints in progress.
// Hints are kept for one database version (the newest a caller named); a call naming another
// version drops the others' hints and pending work (the service serves one version at a time).
// Thread safety: all members may be called concurrently.
#pragma once

#include <memory>

#include "protocol/pir_shared_state.h"

namespace privsearch::protocol {

std::unique_ptr<PirSharedState> make_memory_pir_state(PirSharedLimits limits);

}  // namespace privsearch::protocol
