// Noise flooding for rerank responses: the bound on the fast kernel's output noise that the
// provider's re-randomization must hide (ckks/rerandomize.h explains the flooding itself).
//
// Model (coefficient domain, honest query encryption, ternary secret with about 2n/3 non-zero
// coefficients): the kernel ends with "multiply by the 0/1 score mask at scale ~q_1, rescale
// by q_1", so its output noise is
//   - the last rescale's rounding r_0 + r_1 s:  ||.||_2^2 ~ n/12 + n * (2n/3) / 12 = n/12 + n^2/18;
//   - the level-1 noise E_1 multiplied by the mask and divided by q_1: the mask's coefficient
//     norm is about scale * sqrt(2 m / n) for m ones (Parseval), so ||.||_2 ~ E_1 sqrt(2m / n).
//     E_1 is itself a rescale rounding plus the window-sum rotations' ModDown noise and the
//     query noise times the rows; we take E_1 = 4 x the rounding term.
// The bound is twice the root sum of squares. tests/rerank/flooding_test.cpp measures the
// real noise over the d' and K grid and checks it stays below the bound and within 6 bits of it.
#pragma once

#include "ckks/params.h"
#include "ckks/rerandomize.h"
#include "core/status.h"
#include "rerank/layout.h"

namespace privsearch::rerank {

// Packed kernel (rerank/packed.h): the client reads only the K score coefficients of c0 (the
// others are not sent), so the bound is over those. Per score coefficient, against the real
// score 2^(24 + rho) <z, x> (so that two databases with the same scores are compared, not their
// rounded rows), 6 deviations of each of: the query's CBD noise times the integer row,
// 3.24 x 2^rho x ||x||; the rows' rounding times the query, 0.29 x 2^24 (|z| = 1); the query's
// rounding times the row, 0.29 x 2^rho x ||x|| (rounding errors modelled as independent uniform,
// as for the fast kernel's rescales); plus the packing's key switchings, at most 2^13 (32 of ~19
// units, doubled by each later level's 1 + sigma). B_2 = sqrt(K per output) times their sum. With
// W > 1 outputs (K above n) each is flooded on its own: the distance per response is W 2^-lambda.
// tests/rerank/packed_flooding_test.cpp measures it.
Result<double> packed_kernel_noise_l2_log2(const KernelLayout& layout, const ckks::Params& params,
                                           double max_row_norm);

// The packed kernel's flooding plan: sigma_f = B_2 2^lambda / sqrt(2 pi) on every coefficient;
// a score's error is then sigma_f / scale (no spreading over slots: coefficients are read
// directly), precision_bits = log2(value_bound scale / (5 sigma_f)); kOutOfRange when
// value_bound scale + 8 sigma_f exceeds q / 2 or less than one bit is left, naming the largest
// lambda that fits.
Result<ckks::FloodingPlan> plan_packed_flooding(const ckks::Params& params,
                                                const KernelLayout& layout, int security_bits,
                                                double value_bound, double max_row_norm);

// log2 of a bound on ||e_eval||_2 of every fast-kernel output ciphertext for this layout.
// kFailedPrecondition for other kernels and for params whose fast kernel cannot rescale the
// mask (fewer than three data primes: the unrescaled mask multiplies the noise by its scale).
Result<double> fast_kernel_noise_l2_log2(const KernelLayout& layout, const ckks::Params& params);

}  // namespace privsearch::rerank
