// Samplers for RLWE secrets, noise and uniform polynomials.
//
// - uniform: each coefficient uniform in [0, q_i) by rejection on bit-masked 64-bit words
//   (public data: the uniform `a`; the number of draws is independent of the accepted values).
//   Sampled directly in the NTT domain (the NTT is a bijection, so uniform stays uniform).
// - ternary: uniform in {-1, 0, 1}: v = floor(3 * r / 2^64) - 1 for a 64-bit r (bias < 2^-62).
// - centred binomial CBD(eta): popcount(eta random bits) - popcount(eta random bits), variance
//   eta/2; eta = 21 gives sigma = 3.24, SEAL's default noise (the paper's Table 3).
// Small samples are returned as signed integers in a zeroizing buffer and mapped to RNS rows
// branch-free.
// Thread safety: one Prng per thread. Constant time: ternary/CBD/mapping are branch-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/csprng.h"
#include "core/secure_buffer.h"
#include "ring/modulus.h"
#include "ring/rns_poly.h"

namespace privsearch::ring {

void sample_uniform_rows(Prng& prng, std::span<const Modulus> moduli, RnsPoly& out);
void sample_ternary(Prng& prng, SecureVector<std::int64_t>& out);
void sample_cbd(Prng& prng, int eta, SecureVector<std::int64_t>& out);
// Rows i < moduli.size() of out get the small coefficients mod moduli[i] (coefficient form).
void small_to_rns(std::span<const std::int64_t> small, std::span<const Modulus> moduli,
                  RnsPoly& out);
// The same for signed values of any size (|x| < 2^63, possibly above the moduli, e.g. flooding
// noise): |x| mod q, negated when x < 0, branch-free.
void signed_to_rns(std::span<const std::int64_t> values, std::span<const Modulus> moduli,
                   RnsPoly& out);

}  // namespace privsearch::ring
