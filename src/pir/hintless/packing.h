// LWE-to-RLWE packing of d first-layer answers into one RLWE ciphertext (CDKS: Chen, Dai, Kim,
// Song, ACNS 2021, Algorithm 2; YPIR Construction 2.8), split into a client-independent
// precomputation and an online pass over the b-parts only (YPIR section 4.2).
//
// Convention: a ciphertext (a, b) has phase b - s a. The automorphism key of tau_g holds, for
// gadget digit j, the row (a_j, b_j = s a_j + e_j - tau_g(s) z^j); with balanced digits
// u_j of tau_g(a) (sum_j u_j z^j = tau_g(a) mod q, |u_j| <= z/2),
//   Automorph(a, b) = ( sum_j u_j a_j,  tau_g(b) + sum_j u_j b_j )
// has phase tau_g(b - s a) + sum_j u_j e_j (YPIR Construction 2.6, Thm 2.7).
// Pack over inputs {r : r = r0 mod d/2^l} (level l, 2^l inputs), children even = level l-1 at
// r0 and odd = level l-1 at r0 + d/2^l, w = X^(d/2^l), g = 2^l + 1:
//   plus = even + w odd,  minus = even - w odd,  out = plus + Automorph_g(minus)
// The leaves are the embeddings (a~_r, b_r) of the LWE answers; the root's phase is
// d sum_r phase_r X^r + e_pack (Thm 2.9; the order r -> X^r is pinned by the reference test).
//
// Every a-part in the tree depends on the hint and the key a-rows only (both public and fixed per
// database version), so PackPrecomp keeps, per internal node in post-order, the digits u_j of
// tau_g(a_minus) in NTT form, and the root's a-part. Online, one step per node and query does
//   b_out = b_even + w b_odd + tau_g(b_even - w b_odd) + sum_j u_j . keyb_{l,j}
// (4 products per coefficient and prime; the tau_g is a permutation in NTT form). The digits are
// read from memory once per batch: the bottom 4 levels' subtrees are walked query by query while
// their digits sit in L2, the levels above node by node for the whole batch (packing.cpp).
// Memory: (d - 1) t 2 d 4 bytes per output, 96 MiB at d = 2048.
// Thread safety: PackPrecomp is immutable after build; pack_online may run concurrently.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "pir/hintless/ring_context.h"

namespace privsearch::pir::hintless {

// Per-query packing key b-rows: (log d) t Poly2s in NTT form, level-major then digit, u32 each.
struct PackingKeyView {
  const u32* b = nullptr;
};

class PackPrecomp {
 public:
  // leaf_a: d Poly2s (NTT form), the embedded hint rows of one output block; key_a: the CRS key
  // a-rows (crs_key_polys).
  static PackPrecomp build(const HintlessRing& ring, std::span<const u64> leaf_a,
                           std::span<const u64> key_a);

  std::size_t nodes() const { return nodes_; }
  // Digits of node `node` (post-order): t Poly2s as u32.
  const u32* node_digits(std::size_t node) const { return digits_.data() + node * stride_; }
  // The root's a-part in NTT form (a Poly2).
  const std::vector<u64>& output_a() const { return output_a_; }
  std::size_t memory_bytes() const { return digits_.size() * sizeof(u32); }

 private:
  std::size_t nodes_ = 0;
  std::size_t stride_ = 0;  // t 2 d
  std::vector<u32> digits_;
  std::vector<u64> output_a_;
};

// Balanced base-2^log_z digits of x in [0, q), centred first so that t digits are exact:
// digits[j] in [-z/2, z/2) with sum_j digits[j] z^j = x - q [x > q/2].
void gadget_decompose(u64 x, u64 q, int log_z, int t, std::int64_t* digits);

// Working memory of pack_online, reused across calls by one thread at a time (the server keeps
// one per worker for a whole batch). Allocating and zero-filling it per (output, prime) task cost
// more than a fifth of a 32-query batch (page faults and memset in the profile).
class PackScratch {
 public:
  // At least `words` words; grows, never shrinks; contents unspecified.
  u64* words(std::size_t words) {
    if (buffer_.size() < words) buffer_.resize(words);
    return buffer_.data();
  }

 private:
  std::vector<u64> buffer_;
};

// The online pass for `leaf_b.size()` queries of one output: leaf_b[k] holds the d leaf b-values
// of query k (residues mod q_a, then mod q_b: 2d words); out[k] receives the root's b-part
// (a Poly2, NTT form). `prime`: which half to compute (0, 1), or -1 for both, so that callers
// can split one output over two threads.
// `scratch`: reused working memory (null: a fresh one for this call).
void pack_online(const HintlessRing& ring, const PackPrecomp& pre,
                 std::span<const u64* const> leaf_b, std::span<const PackingKeyView> keys,
                 std::span<u64* const> out, int prime = -1, PackScratch* scratch = nullptr);

}  // namespace privsearch::pir::hintless
