// The packed rerank kernel (provider side, public material only): K inner products from one
// coefficient-encoded query, gathered into one ciphertext whose other coefficients are zero.
//
// Math (layout.h "Packed kernel" for the positions; n = 2^N, block B = next_pow2(d'), r = n/B):
//  1. Leaf plaintexts. Leaf i holds rows x_{ir+k} (k < r) at coefficients B k + a, a < d':
//       L_i = B^-1 * sum_k sum_a round(2^rho x_{ir+k,a}) X^(B k + a)   (mod q),
//     and the client's query is Q = sum_a round(2^24 z_a) X^-a, so coefficient B k of Q * L_i is
//     B^-1 * 2^(24 + rho) <z, x_{ir+k}> (+ the query noise times the row): a plaintext product,
//     no rotation. The other coefficients of Q * L_i are sums the client must not see. The row
//     scale rho follows from a bound on the rows' norms (the store's, never the candidates':
//     the output scale is public): |score| <= bound for a unit query, so
//       rho = floor(log2(q / 4) - 24 - log2(bound))
//     keeps every score below q / 4 (room for noise and a flood). Relative to the bound the
//     error does not depend on it: query noise 3.24 ||x|| / 2^24, row rounding 0.29 / 2^rho.
//  2. CDKS packing (Chen, Dai, Kim, Song, ACNS 2021, Algorithm 2; as pir/hintless/packing.h, over
//     ckks key switching): a node at tree level h (1 = leaves' parents .. l = root) merges its
//     even and odd children with w = X^(B / 2^h) and g_h = 2^(log2(2r) + h - 1) + 1:
//       out = (even + w odd) + sigma_g(even - w odd) = (1 + sigma_g) even + w (1 + sigma_g) odd,
//     since sigma_g(w) = -w; every w of a lower level is fixed by the later sigma's. After the
//     tree, the trace tail out += sigma_g(out) for g = 2^j + 1, j = log2(2r) + l .. N. Each leaf
//     has then passed through prod_j (1 + sigma_{2^j+1}) = sum over the subgroup
//     H = {g = 1 mod 2r} of sigma_g (the products 2^j + 1 enumerate H), the trace onto Z[X^B]:
//     coefficients B k are multiplied by |H| = B (cancelling B^-1 exactly, as phases mod q) and
//     every other coefficient becomes exactly 0. Only key-switching noise is added: at most
//     (leaves - 1) + (log2(B) - l) key switchings.
//  Leaf i is the tree's input brv_l(i) (l-bit reversal, layout.h), so leaves 2j and 2j + 1 meet
//  first. Inputs without a leaf (fewer than 2^l leaves) are zero: a node with one child still
//  applies (1 + sigma_g); a node with none is skipped. At d' = 672, K = 100: 25 leaves, l = 5,
//  13 + 7 + 4 + 2 + 1 merges and 5 trace steps, 32 key switchings.
// Errors: those of validate_kernel_inputs (kernels.h), kInvalidArgument for a row of norm above
// the bound (its score could wrap modulo q) or a bound that leaves no row scale,
// kFailedPrecondition for other params.
// Memory: the leaf products are made as the tree reaches them, so a request holds about two
// ciphertexts per tree level (64 KB each at n = 4096), not all of its leaves.
// Thread safety: stateless; `threads` > 1 runs the root's two subtrees (leaf products
// included) on two threads (exact modular arithmetic: the output does not depend on the count).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "ckks/ciphertext.h"
#include "ckks/evaluator.h"
#include "ckks/galois_keys.h"
#include "ckks/plaintext.h"
#include "core/status.h"
#include "rerank/layout.h"

namespace privsearch::rerank {

// The bound the tests and the benchmarks use for unit rows (any bound >= the largest row norm
// works; the provider passes its store's largest norm).
inline constexpr double kPackedDefaultRowNormBound = 2.0;

// rho above: kInvalidArgument when the bound is not finite and positive or leaves rho < 1.
Result<int> packed_row_log_scale(const ckks::Params& params, double row_norm_bound);

// Leaf `leaf` of output `output` as a plaintext (NTT form, level 0, scale 2^rho), the step-1
// encoding above. rows: K x d' row-major.
Result<ckks::Plaintext> packed_leaf_plaintext(const KernelLayout& layout,
                                              const ckks::Params& params,
                                              std::span<const float> rows, std::size_t output,
                                              std::size_t leaf, int row_log_scale);

// The trace of a ciphertext: out = prod_j (1 + sigma_{2^j+1}) ct over j = first..N (step 2's
// tail), used for the levels above the tree.
Result<ckks::Ciphertext> packed_trace_tail(const ckks::Evaluator& evaluator,
                                           const ckks::GaloisKeys& keys, ckks::Ciphertext ct,
                                           int first_exponent, std::size_t* key_switches);

struct PackedResult {
  std::vector<ckks::Ciphertext> outputs;  // level 0, scale 2^(24 + rho) (query x rows)
  std::size_t plaintext_products = 0;
  std::size_t key_switches = 0;
};

Result<PackedResult> evaluate_packed_kernel(const KernelLayout& layout,
                                            const ckks::Evaluator& evaluator,
                                            const ckks::GaloisKeys& keys,
                                            const ckks::Ciphertext& query,
                                            std::span<const float> rows, std::size_t threads = 1,
                                            double row_norm_bound = kPackedDefaultRowNormBound);

}  // namespace privsearch::rerank
