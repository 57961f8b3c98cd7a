// Response re-randomization by noise flooding: the provider's optional defence of circuit
// privacy (search paper, section 4.4; reference notes 4.4).
//
// Why: decrypting a response gives the client m + e_eval, and e_eval (the client's own
// encryption noise multiplied by the provider's rows, key-switching noise, rescale rounding) is
// a deterministic function of values the client knows and of the provider's exact rows, so it
// can carry information about those rows beyond the K scores. Flooding adds a fresh encryption
// of zero under the client's public key,
//     ct' = ct + (pk0 * u + e0 + f, pk1 * u + e1),   u ternary, e0, e1 ~ N(0, 3.2^2),
//     f ~ round(N(0, sigma_f^2))^n   (coefficient form, every prime of ct's level),
// so c1 is re-randomized (RLWE) and the decrypted noise is e_eval + f + (small terms).
// Sizing (statistical security lambda, semi-honest client): for a fixed shift e,
//     SD( N(0, s^2 I), N(e, s^2 I) ) = 2 Phi(||e||_2 / (2 s)) - 1 <= ||e||_2 / (s sqrt(2 pi)),
// and rounding to integers is post-processing, so sigma_f = B_2 * 2^lambda / sqrt(2 pi) makes
// the response distributions for any two provider databases with the same scores within
// 2^-lambda, where B_2 bounds ||e_eval||_2 (the kernel's noise model; see
// rerank::flooding_noise_bound). This holds only for honestly encrypted queries (a malicious
// client can send huge noise that no fixed flood hides).
// Cost: the slot error of f is Gaussian with per-slot (real part) deviation sigma_f sqrt(n/2);
// at 5 deviations that is lambda + log2(B_2) + log2(5 sqrt(n / 4 pi)) bits off the scale, about
// lambda + 6 bits more than the kernel's own noise at n = 8192: affordable only when the
// kernel's precision has that much room (plan_flooding() reports it and refuses overflow).
// Thread safety: pure functions; the Prng is the caller's. Constant time: the sampled values
// are mapped to residues without branches; sampling time does not depend on their values.
#pragma once

#include "ckks/ciphertext.h"
#include "ckks/params.h"
#include "ckks/public_key.h"
#include "core/csprng.h"
#include "core/status.h"

namespace privsearch::ckks {

struct FloodingPlan {
  int security_bits = 0;      // lambda: responses within statistical distance 2^-lambda
  double noise_l2_log2 = 0;   // log2 B_2, the bound on ||e_eval||_2 the plan hides
  double sigma_log2 = 0;      // log2 sigma_f (coefficients)
  double precision_bits = 0;  // predicted log2(value_bound / worst slot error) after f
  std::size_t level = 0;      // the ciphertext level the plan was made for
};

// lambda in [1, 128]; noise_l2_log2 finite; value_bound bounds |slot value| (the precision is
// relative to it); message_coeff_bound bounds the message's coefficients in units of the scale
// (for m non-zero slots of magnitude <= v it is at most 2 m v / n; 0 skips the fit check).
// kOutOfRange when fewer than one bit of precision is left or the flood does not fit the
// modulus of `level` next to the message (message_coeff_bound * scale + 8 sigma_f <= Q_l / 4),
// with the largest lambda that would fit in the message.
Result<FloodingPlan> plan_flooding(const Params& params, std::size_t level, double scale,
                                   double value_bound, int security_bits, double noise_l2_log2,
                                   double message_coeff_bound = 0);

// The largest lambda whose plan fits and leaves at least min_precision_bits (0: none).
int max_flooding_security_bits(const Params& params, std::size_t level, double scale,
                               double value_bound, double noise_l2_log2, double min_precision_bits,
                               double message_coeff_bound = 0);

// ct + a fresh flooded encryption of zero under pk (see above). kFailedPrecondition when pk,
// ct or the plan disagree (params id, level).
Result<Ciphertext> rerandomize(const Params& params, const Ciphertext& ct, const PublicKey& pk,
                               const FloodingPlan& plan, Prng& prng);

}  // namespace privsearch::ckks
