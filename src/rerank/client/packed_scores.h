// Client side of the packed rerank kernel (rerank/packed.h): the coefficient-encoded query and
// the decryption of packed responses (rerank/packed_response.h). Client library only.
//
// Query: Q = sum_a round(delta z_a) X^-a = round(delta z_0) - sum_{a>0} round(delta z_a) X^(n-a)
// (delta = the preset's scale, 2^24), encrypted seeded and symmetric at level 0; the provider
// multiplies it by leaves holding the rows at coefficients B k + a, so coefficient B k of the
// product is delta 2^18 <z, x>.
// Decryption: t = c1'' s computed exactly (c1'' centred, lifted mod q, two NTTs against s's NTT
// row, centred back: |t_p| <= n 2^(b1-1) < q / 2 by packed_response.h's bound on b1), then
// m_p = c0''_p 2^(k-b0) + t_p 2^(k-b1) mod 2^k, centred, divided by the scale. Every buffer that
// held a secret-dependent value (t and the phases) is wiped before returning.
// Thread safety: stateless apart from the caller's Prng.
#pragma once

#include <span>
#include <vector>

#include "ckks/ciphertext.h"
#include "ckks/client/secret_key.h"
#include "ckks/params.h"
#include "core/csprng.h"
#include "core/status.h"
#include "rerank/layout.h"
#include "rerank/packed_response.h"

namespace privsearch::rerank {

// z: d' finite values with |z_a| <= 1 (kInvalidArgument otherwise).
Result<ckks::Ciphertext> encrypt_packed_query(const KernelLayout& layout,
                                              const ckks::Params& params, const ckks::SecretKey& sk,
                                              std::span<const double> z, Prng& prng);

// outputs.size() must equal layout.outputs(); output w must carry the scores of its candidates.
Result<std::vector<double>> decrypt_packed_scores(const KernelLayout& layout,
                                                  const ckks::Params& params,
                                                  const ckks::SecretKey& sk,
                                                  std::span<const PackedCiphertext> outputs);

}  // namespace privsearch::rerank
