// Client side of the encrypted rerank (client library): the query in a kernel's layout,
// encrypted seeded; exactly the rotation keys a kernel needs; and decryption of the kernel's
// outputs (full or compact) back to one score per candidate, in request order.
// Thread safety: stateless apart from the caller's Prng.
#pragma once

#include <span>
#include <vector>

#include "ckks/ciphertext.h"
#include "ckks/client/keygen.h"
#include "ckks/client/secret_key.h"
#include "ckks/compact.h"
#include "ckks/encoder.h"
#include "ckks/galois_keys.h"
#include "core/csprng.h"
#include "core/status.h"
#include "rerank/layout.h"

namespace privsearch::rerank {

// z has d' values (kInvalidArgument otherwise, or if any is not finite); the result is the
// seeded symmetric encryption of the replicated query at the top level and default scale.
Result<ckks::Ciphertext> encrypt_query(const KernelLayout& layout, const ckks::Params& params,
                                       const ckks::SecretKey& sk, std::span<const double> z,
                                       Prng& prng);

// Galois keys for exactly layout.rotation_steps.
Result<ckks::GaloisKeys> make_rotation_keys(const KernelLayout& layout,
                                            const ckks::KeyGenerator& keygen,
                                            const ckks::SecretKey& sk, Prng& prng);

// outputs.size() must equal layout.outputs.
Result<std::vector<double>> decrypt_scores(const KernelLayout& layout, const ckks::Params& params,
                                           const ckks::SecretKey& sk,
                                           std::span<const ckks::Ciphertext> outputs);
Result<std::vector<double>> decrypt_compact_scores(
    const KernelLayout& layout, const ckks::Params& params, const ckks::SecretKey& sk,
    std::span<const ckks::CompactCiphertext> outputs);

}  // namespace privsearch::rerank
