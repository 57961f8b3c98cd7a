// Encrypted rerank kernels (provider side, public CKKS material only).
//
// Every kernel scores K candidate rows x_c (dimension d') against the client's encrypted query
// z, replicated as KernelLayout::replicate_query describes, and returns ciphertexts whose slots
// at KernelLayout::slot_map hold <z, x_c>.
//  - naive / grouped / one_response: the paper's kernels, operation for operation (section 2.5
//    of hybrid-search-reference.md; Table 4 counts at d' = 672, K = 100: 100/25/50 products,
//    100/25/25 rescales, 1000/250/304 rotations, 1000/250/274 additions). Rows and the query at
//    the preset's scale, the one_response masks at 2^19 without rescaling (or smaller when q_0
//    cannot hold 2^19 more bits).
//  - fast: the window layout of layout.h with baby-step/giant-step products
//      W = sum_g rot( sum_i P'_{g,i} * rot(z, i), g*b1 ),  P'_{g,i} = rot(P_{g*b1+i}, -g*b1),
//    the baby rotations hoisted, one rescale, a rotate-and-sum over strides b..L'/2, and a mask
//    that zeroes every slot but the K scores (then a second rescale when the level allows).
// OpCounts counts every evaluator call a kernel makes, so tests can pin the paper's numbers.
// Errors: kInvalidArgument (rows not K x d', non-finite values), kFailedPrecondition (query at
// the wrong level or params), kNotFound (a rotation key the layout needs is missing).
// Threads: the fast kernel spreads its independent giant-step groups (~0.4 ms each at d' = 672)
// over `threads` (the caller's and short-lived helpers; exact modular sums in a fixed order, so
// the output bytes do not depend on the count). The rest, and the paper kernels, run on the
// caller's thread.
// row_norm_bound: the packed kernel's (rerank/packed.h; 0 takes kPackedDefaultRowNormBound);
// the slot kernels ignore it.
// Thread safety: stateless; the evaluator and keys are shared read-only.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "ckks/ciphertext.h"
#include "ckks/encoder.h"
#include "ckks/evaluator.h"
#include "ckks/galois_keys.h"
#include "core/status.h"
#include "rerank/layout.h"

namespace privsearch::rerank {

struct OpCounts {
  std::size_t multiply_plain = 0;
  std::size_t rescales = 0;
  std::size_t rotations = 0;
  std::size_t additions = 0;
  std::size_t encodes = 0;
};

struct KernelResult {
  std::vector<ckks::Ciphertext> outputs;
  OpCounts counts;
  double encode_ms = 0;  // plaintext encoding time inside the kernel (the calling thread's)
  double he_ms = 0;      // the rest of the kernel's wall time
};

// Checks that rows is K x d' and finite, that the query matches the params and sits at the top
// level, and that `keys` holds every step of the layout.
Status validate_kernel_inputs(const KernelLayout& layout, const ckks::Params& params,
                              const ckks::GaloisKeys& keys, const ckks::Ciphertext& query,
                              std::span<const float> rows);

// rows: K x d' row-major (candidate c's exact vector at rows[c * d' .. c * d' + d')).
Result<KernelResult> evaluate_kernel(const KernelLayout& layout, const ckks::Encoder& encoder,
                                     const ckks::Evaluator& evaluator, const ckks::GaloisKeys& keys,
                                     const ckks::Ciphertext& query, std::span<const float> rows,
                                     std::size_t threads = 1, double row_norm_bound = 0);

}  // namespace privsearch::rerank
