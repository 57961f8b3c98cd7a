// Slot layouts of the encrypted rerank kernels (module rerank, provider and client side).
//
// Notation: S = n/2 slots, d = projected dimension d', K candidates.
//
// Paper kernels (hybrid-search-reference.md section 2.5): L = next_pow2(d), B = S / L blocks,
// the query z is tiled with period L. Candidate c is in group g = c / B at block b = c % B.
//  - naive: one ciphertext per candidate, score at slot 0;
//  - grouped: one ciphertext per group, score b at slot b*L;
//  - one_response: the groups' score slots masked and shifted left by g into one ciphertext:
//    score (g, b) at slot (b*L - g) mod S.
//  Rotation keys: the powers of two below L.
//
// Fast kernel ("window" layout, ours; DESIGN.md section 5 generalized to block lengths that are
// not powers of two): a block of L' = b * w slots (w a power of two, L' >= d) holds b residue
// classes; class r of block beta is candidate c = beta * b + r and owns the w slots
// beta*L' + r + k*b (k < w). The query is replicated with period L' over all S slots; for
// j < b the plaintext P_j holds, at slot s of class c, x_c[(s mod L' + j) mod L'] (0 beyond d),
// so sum_j P_j * rot(z, j) gives at each slot the window sum of b consecutive coordinates, and
// the sum over k < w of rot(W, k*b) leaves the full score <z, x_c> at slot beta*L' + r. That sum
// of rotations of one ciphertext is itself split baby-step/giant-step, w = w1 * w2, with
// double-hoisted rotations (two ModDowns in all). The b baby products are split
// baby-step/giant-step as b = b1 * b2. Since rotations act on all S slots, slots up to B*L' + b - 2
// must still carry the replicated query: B = floor((S - b + 1) / L'). A mask keeps only the K score
// slots. One ciphertext holds up to B * b candidates; larger K uses more ciphertexts with the same
// layout. make_layout picks (w, b) minimizing a cost model of plaintext products and rotations
// among the layouts whose single ciphertext holds all K candidates (several ciphertexts only when
// none can, roughly K > S - d').
//
// Packed kernel (rerank/packed.h; coefficient encoding, no slots): n = 2S coefficients, block
// length B = next_pow2(d') <= S, r = n / B rows per leaf plaintext. The query is the polynomial
// sum_a z_a X^-a, so the product with a leaf holding row k at coefficients B k + a has the score
// of row k at coefficient B k. CDKS packing (Chen-Dai-Kim-Song 2021, Algorithm 2, run from the
// subgroup {g = 1 mod 2r} that fixes Z[X^B]) over 2^l leaves puts leaf i's row k at coefficient
// B k + brv_l(i) B / 2^l of one ciphertext (l = tree_levels, the smallest with 2^l r >= min(K, n);
// leaf i sits at tree index brv_l(i), l-bit reversal, so that the missing leaves past the last
// one share subtrees and cost no key switching);
// K > n uses ceil(K / n) such outputs. Keys: sigma_g for g = 2^j + 1, j = log2(2r) .. log2(n),
// i.e. log2(B) of them, named by their rotation steps (every such g is a power of 5).
// Thread safety: value types and pure functions.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ckks/params.h"
#include "core/status.h"

namespace privsearch::rerank {

enum class Kernel { kNaive = 1, kGrouped = 2, kOneResponse = 3, kFast = 4, kPacked = 5 };

std::string_view kernel_name(Kernel kernel);
Result<Kernel> kernel_from_name(std::string_view name);

// Where candidate c's score lands.
struct SlotRef {
  std::size_t ciphertext = 0;
  std::size_t slot = 0;
};

// What make_layout decides for one (kernel, d', K): the slot layout's shape.
struct LayoutFields {
  Kernel kernel = Kernel::kFast;
  std::size_t dim = 0;     // d'
  std::size_t k = 0;       // candidates
  std::size_t slots = 0;   // S
  std::size_t period = 0;  // replication period of the query (L or L')
  std::size_t blocks = 0;  // B: blocks per ciphertext
  // Fast kernel only:
  std::size_t width = 0;            // b: classes per block (baby products)
  std::size_t windows = 0;          // w: windows per class (rotate-and-sum factor)
  std::size_t baby = 0;             // b1
  std::size_t giant = 0;            // b2
  std::size_t sum_baby = 0;         // w1: the window sum over k < w = w1 * w2 is done as
  std::size_t sum_giant = 0;        // w2:   sum_k2 rot( sum_k1 rot(W, k1*b), k2*w1*b )
  std::size_t tree_levels = 0;      // packed only: l, the CDKS tree's depth
  std::size_t capacity = 0;         // candidates per output ciphertext
  std::size_t outputs = 0;          // output ciphertexts
  std::vector<int> rotation_steps;  // exactly the Galois keys the kernel uses, sorted
  std::vector<SlotRef> slot_map;    // candidate c -> score position
};

// A layout as make_layout computed it, read-only: the kernels, the request checks and the
// client's decryption all rely on its fields agreeing with each other (period >= d', the slot
// map inside the outputs, the rotation steps the kernel uses), so only make_layout builds one.
// A default-constructed layout is empty (K = 0) until a layout is assigned to it.
class KernelLayout {
 public:
  KernelLayout() = default;

  Kernel kernel() const { return f_.kernel; }
  std::size_t dim() const { return f_.dim; }
  std::size_t k() const { return f_.k; }
  std::size_t slots() const { return f_.slots; }
  std::size_t period() const { return f_.period; }
  std::size_t blocks() const { return f_.blocks; }
  std::size_t width() const { return f_.width; }
  std::size_t windows() const { return f_.windows; }
  std::size_t baby() const { return f_.baby; }
  std::size_t giant() const { return f_.giant; }
  std::size_t sum_baby() const { return f_.sum_baby; }
  std::size_t sum_giant() const { return f_.sum_giant; }
  std::size_t tree_levels() const { return f_.tree_levels; }
  std::size_t capacity() const { return f_.capacity; }
  std::size_t outputs() const { return f_.outputs; }
  const std::vector<int>& rotation_steps() const { return f_.rotation_steps; }
  const std::vector<SlotRef>& slot_map() const { return f_.slot_map; }

  // Query slot vector: z (dim values) replicated with `period` over all S slots (the slot
  // kernels; the packed kernel encodes coefficients, rerank/client/packed_scores.h).
  std::vector<double> replicate_query(std::span<const double> z) const;

 private:
  friend Result<KernelLayout> make_layout(const ckks::Params& params, Kernel kernel,
                                          std::size_t dim, std::size_t k);
  explicit KernelLayout(LayoutFields f) : f_(std::move(f)) {}
  LayoutFields f_;
};

// The one hard limit on K, the candidates of one request: make_layout, the message decoders and
// every command-line option that takes K enforce it. A provider's operator sets a smaller one
// (ProviderLimits::max_candidates, default 1024), which it publishes in ServerInfo.limits.
inline constexpr std::size_t kMaxCandidates = 65536;

// The kernel a preset is made for: kPacked for params with one data prime ("packed-n4096": no
// level for the slot kernels' rescales), kFast for every other preset.
Kernel kernel_for_params(const ckks::Params& params);

// Errors: kInvalidArgument for dim outside [1, S] or k outside [1, kMaxCandidates], and for the
// one_response kernel when K > S or more groups than L (the paper's own limits).
Result<KernelLayout> make_layout(const ckks::Params& params, Kernel kernel, std::size_t dim,
                                 std::size_t k);

}  // namespace privsearch::rerank
