#include "pir/hintless/packing.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "pir/hintless/kernels.h"

namespace privsearch::pir::hintless {
namespace {

// plus = even + w odd and minus = even - w odd, both in [0, 2q), for one prime's half.
void butterfly(const u64* even, const u64* odd, const u64* w, u64 q, u64 ratio, std::size_t d,
               u64* plus, u64* minus) {
  for (std::size_t i = 0; i < d; ++i) {
    const u64 t = HintlessRing::reduce(odd[i] * w[i], q, ratio);
    plus[i] = even[i] + t;
    minus[i] = even[i] + q - t;
  }
}

// The a-side recursion: fills the digits of every internal node in post-order.
class PrecompBuilder {
 public:
  PrecompBuilder(const HintlessRing& ring, std::span<const u64> leaf_a, std::span<const u64> key_a,
                 std::vector<u32>& digits)
      : ring_(ring), leaf_a_(leaf_a), key_a_(key_a), digits_(digits) {
    const std::size_t n = 2 * ring.d();
    even_.assign(ring.log_d() + 1, std::vector<u64>(n));
    odd_ = even_;
    plus_.resize(n);
    minus_.resize(n);
    coeff_.resize(n);
    digit_polys_.resize(ring.params().gadget_digits * n);
  }

  void node(int level, std::size_t r0, u64* out) {
    const std::size_t d = ring_.d(), n = 2 * d;
    if (level == 0) {
      std::memcpy(out, leaf_a_.data() + r0 * n, n * sizeof(u64));
      return;
    }
    node(level - 1, r0, even_[level].data());
    node(level - 1, r0 + (d >> level), odd_[level].data());
    for (int p = 0; p < 2; ++p) {
      butterfly(even_[level].data() + p * d, odd_[level].data() + p * d,
                ring_.level_monomial(level) + p * d, ring_.prime(p), ring_.ratio(p), d,
                plus_.data() + p * d, minus_.data() + p * d);
      for (std::size_t i = 0; i < d; ++i) {
        minus_[p * d + i] = ring::reduce_once(minus_[p * d + i], ring_.prime(p));
      }
      ring_.level_automorphism(level).apply(minus_.data() + p * d, coeff_.data() + p * d);
    }
    decompose_node();
    accumulate_a(level, out);
    ++node_;
  }

 private:
  // coeff_ (tau_g(a_minus), NTT form) -> t digit Poly2s in NTT form, stored as this node's u32s.
  void decompose_node() {
    const std::size_t d = ring_.d(), n = 2 * d;
    const int t = ring_.params().gadget_digits;
    ring_.inverse(coeff_.data());
    std::int64_t dig[8];
    for (std::size_t i = 0; i < d; ++i) {
      gadget_decompose(ring_.crt(coeff_[i], coeff_[d + i]), ring_.q(),
                       ring_.params().gadget_log_base, t, dig);
      for (int j = 0; j < t; ++j) {
        digit_polys_[j * n + i] = ring_.modulus(0).from_signed(dig[j]);
        digit_polys_[j * n + d + i] = ring_.modulus(1).from_signed(dig[j]);
      }
    }
    u32* stored = digits_.data() + node_ * t * n;
    for (int j = 0; j < t; ++j) {
      ring_.forward(digit_polys_.data() + j * n);
      for (std::size_t i = 0; i < n; ++i)
        stored[j * n + i] = static_cast<u32>(digit_polys_[j * n + i]);
    }
  }

  // out = plus + sum_j u_j . key_a_{level, j}.
  void accumulate_a(int level, u64* out) {
    const std::size_t d = ring_.d(), n = 2 * d;
    const int t = ring_.params().gadget_digits;
    for (int p = 0; p < 2; ++p) {
      for (std::size_t i = 0; i < d; ++i) {
        u64 acc = plus_[p * d + i];
        for (int j = 0; j < t; ++j) {
          const std::size_t at = j * n + p * d + i;
          acc += digit_polys_[at] * key_a_[((level - 1) * t + j) * n + p * d + i];
        }
        out[p * d + i] = HintlessRing::reduce(acc, ring_.prime(p), ring_.ratio(p));
      }
    }
  }

  const HintlessRing& ring_;
  std::span<const u64> leaf_a_, key_a_;
  std::vector<u32>& digits_;
  std::vector<std::vector<u64>> even_, odd_;
  std::vector<u64> plus_, minus_, coeff_, digit_polys_;
  std::size_t node_ = 0;
};

// The b-side recursion for a batch, one prime half at a time.
//
// Order of work (measured: the loads of keys and child outputs, not the products, bounded the
// node-by-node order, ~14 ms per output and query at d = 2048 on a 2-vCPU EPYC): the subtrees of
// at most kQueryMajorLevels levels run query by query. A subtree's digits ((2^h - 1) t d words
// per prime, 360 KiB at h = 4) stay in L2 while every query walks it, and one query's keys for
// those levels (h t d words) and its scratch polynomials stay in L1/L2 within the walk. Only the
// d / 2^h - 1 nodes above them run node by node for the whole batch. Both orders visit the nodes
// in the same post-order, so the digits are read by the same index and the result is the same.
class OnlinePacker {
 public:
  static constexpr int kQueryMajorLevels = 4;

  // Scratch layout (words): per level and query an even and an odd Poly2 (2d; half p_ used) for
  // the node-by-node levels above kQueryMajorLevels, the same per level of one query's walk, and
  // per query plus, minus and tau(minus) (d each).
  OnlinePacker(const HintlessRing& ring, const PackPrecomp& pre, std::span<const u64* const> leaf_b,
               std::span<const PackingKeyView> keys, int prime, PackScratch& scratch)
      : ring_(ring),
        pre_(pre),
        leaf_b_(leaf_b),
        keys_(keys),
        p_(prime),
        off_(static_cast<std::size_t>(prime) * ring.d()) {
    const std::size_t d = ring.d(), k = leaf_b.size(), levels = ring.log_d() + 1;
    const std::size_t walk = std::min<std::size_t>(levels, kQueryMajorLevels + 1);
    const std::size_t major = levels - walk;
    u64* at = scratch.words((2 * major * k + 2 * walk) * 2 * d + 3 * k * d);
    auto take = [&](std::size_t words) { return std::exchange(at, at + words); };
    for (std::size_t i = 0; i < major * k; ++i) {
      even_.push_back(take(2 * d));
      odd_.push_back(take(2 * d));
    }
    for (std::size_t i = 0; i < walk; ++i) {
      sub_even_.push_back(take(2 * d));
      sub_odd_.push_back(take(2 * d));
    }
    for (std::size_t q = 0; q < k; ++q) {
      plus_.push_back(take(d));
      minus_.push_back(take(d));
      minus_perm_.push_back(take(d));
    }
  }

  void node(int level, std::size_t r0, std::span<u64* const> out) {
    const std::size_t d = ring_.d(), k = leaf_b_.size();
    if (level <= kQueryMajorLevels) {
      const std::size_t first = node_;
      for (std::size_t q = 0; q < k; ++q) {
        node_ = first;
        subtree(level, r0, q, out[q]);
      }
      return;
    }
    std::vector<u64*> even(k), odd(k);
    for (std::size_t q = 0; q < k; ++q) {
      even[q] = even_[(level - kQueryMajorLevels - 1) * k + q];
      odd[q] = odd_[(level - kQueryMajorLevels - 1) * k + q];
    }
    node(level - 1, r0, even);
    node(level - 1, r0 + (d >> level), odd);
    combine(level, pre_.node_digits(node_++), even, odd, out);
  }

 private:
  // One query's walk of the subtree at (level, r0).
  void subtree(int level, std::size_t r0, std::size_t q, u64* out) {
    const std::size_t d = ring_.d();
    if (level == 1) return combine_leaves(r0, q, pre_.node_digits(node_++), out);
    if (level == 2) return combine_level2(r0, q, out);
    u64* even = sub_even_[level];
    u64* odd = sub_odd_[level];
    subtree(level - 1, r0, q, even);
    subtree(level - 1, r0 + (d >> level), q, odd);
    combine_one(level, q, pre_.node_digits(node_++), even, odd, out);
  }

  // A node over two leaves, whose b-parts are constants c_e, c_o (a constant's NTT is that
  // constant everywhere). w = X^(d/2) takes the values +-I (I^2 = -1) in NTT form, +I on the
  // first half of the indices and -I on the second (index i evaluates at psi^(2 brv(i) + 1)),
  // and tau_3(c_e - c_o X^(d/2)) = c_e + c_o X^(d/2) because X^(3d/2) = -X^(d/2). So
  //   plus + tau_3(minus) = 2 (c_e + c_o w):   two constants, one per half, and no butterfly,
  // permutation or leaf fill for half of all nodes. HintlessRing::create checks the +-I shape.
  void combine_leaves(std::size_t r0, std::size_t q, const u32* digits, u64* out) {
    const std::size_t d = ring_.d(), n = 2 * d, half = d / 2;
    const int t = ring_.params().gadget_digits;
    const ReduceConstants m{ring_.prime(p_), ring_.ratio(p_)};
    for (std::size_t c = 0; c < d; c += half) {
      pack_accumulate_const(leaf_pair_base(r0, q, c), digits + off_ + c, keys_[q].b + off_ + c, n,
                            t, m, half, out + off_ + c);
    }
  }

  // The constant b-part of the node over leaves r0 and r0 + d/2 on the half starting at c.
  u64 leaf_pair_base(std::size_t r0, std::size_t q, std::size_t c) const {
    const ring::Modulus& mod = ring_.modulus(p_);
    const u64 w = ring_.level_monomial(1)[off_ + c];
    const u64 ce = leaf_b_[q][off_ + r0], co = leaf_b_[q][off_ + r0 + ring_.d() / 2];
    return mod.add(mod.add(ce, mod.mul(co, w)), mod.add(ce, mod.mul(co, w)));
  }

  // A level-2 node with its two leaf-pair children in one pass for their products and the
  // butterfly (pack_leaf_pairs_butterfly: the children's outputs are never stored), then the
  // node's own digit products: the same words as the three steps apart.
  void combine_level2(std::size_t r0, std::size_t q, u64* out) {
    const std::size_t d = ring_.d(), n = 2 * d, half = d / 2;
    const int t = ring_.params().gadget_digits;
    const ReduceConstants m{ring_.prime(p_), ring_.ratio(p_)};
    const u32* digits_even = pre_.node_digits(node_);
    const u32* digits_odd = pre_.node_digits(node_ + 1);
    const u32* digits = pre_.node_digits(node_ + 2);
    node_ += 3;
    const u64* w = ring_.level_monomial(2) + off_;
    for (std::size_t c = 0; c < d; c += half) {
      pack_leaf_pairs_butterfly(leaf_pair_base(r0, q, c), leaf_pair_base(r0 + d / 4, q, c),
                                digits_even + off_ + c, digits_odd + off_ + c,
                                keys_[q].b + off_ + c, n, t, w + c, m, half, plus_[0] + c,
                                minus_[0] + c);
    }
    finish_node(2, q, digits, out);
  }

  // One node for one query: butterfly, permutation, digit products over the whole half.
  void combine_one(int level, std::size_t q, const u32* digits, const u64* even, const u64* odd,
                   u64* out) {
    const ReduceConstants m{ring_.prime(p_), ring_.ratio(p_)};
    pack_butterfly(even + off_, odd + off_, ring_.level_monomial(level) + off_, m, ring_.d(),
                   plus_[0], minus_[0]);
    finish_node(level, q, digits, out);
  }

  // out = plus + tau(minus) + sum_j digit_j key_{level, j} from plus_[0], minus_[0].
  void finish_node(int level, std::size_t q, const u32* digits, u64* out) {
    const std::size_t d = ring_.d(), n = 2 * d;
    const int t = ring_.params().gadget_digits;
    const ReduceConstants m{ring_.prime(p_), ring_.ratio(p_)};
    const ring::GaloisPermutation& perm = ring_.level_automorphism(level);
    const std::size_t key_at = static_cast<std::size_t>(level - 1) * t * n + off_;
    if (!perm.block_source().empty()) {
      return pack_accumulate_permuted(plus_[0], minus_[0], perm.block_source().data(),
                                      perm.block_lanes().data(), digits + off_, keys_[q].b + key_at,
                                      n, t, m, d, out + off_);
    }
    perm.apply(minus_[0], minus_perm_[0]);
    pack_accumulate(plus_[0], minus_perm_[0], digits + off_, keys_[q].b + key_at, n, t, m, d,
                    out + off_);
  }

  // One node for every query: the butterflies and permutations first, then the digit products
  // in chunks small enough that a chunk of digits stays in L1 across the queries.
  void combine(int level, const u32* digits, std::span<u64* const> even, std::span<u64* const> odd,
               std::span<u64* const> out) {
    constexpr std::size_t kChunk = 256;
    const std::size_t d = ring_.d(), n = 2 * d, k = leaf_b_.size();
    const int t = ring_.params().gadget_digits;
    const ReduceConstants m{ring_.prime(p_), ring_.ratio(p_)};
    const ring::GaloisPermutation& perm = ring_.level_automorphism(level);
    for (std::size_t q = 0; q < k; ++q) {
      pack_butterfly(even[q] + off_, odd[q] + off_, ring_.level_monomial(level) + off_, m, d,
                     plus_[q], minus_[q]);
      perm.apply(minus_[q], minus_perm_[q]);
    }
    const std::size_t key_at = static_cast<std::size_t>(level - 1) * t * n + off_;
    for (std::size_t c = 0; c < d; c += kChunk) {
      const std::size_t count = std::min(kChunk, d - c);
      for (std::size_t q = 0; q < k; ++q) {
        pack_accumulate(plus_[q] + c, minus_perm_[q] + c, digits + off_ + c,
                        keys_[q].b + key_at + c, n, t, m, count, out[q] + off_ + c);
      }
    }
  }

  const HintlessRing& ring_;
  const PackPrecomp& pre_;
  std::span<const u64* const> leaf_b_;
  std::span<const PackingKeyView> keys_;
  int p_;
  std::size_t off_;
  std::vector<u64*> even_, odd_;                 // per level and query (node by node)
  std::vector<u64*> sub_even_, sub_odd_;         // per level (one query's walk)
  std::vector<u64*> plus_, minus_, minus_perm_;  // per query
  std::size_t node_ = 0;
};

}  // namespace

void gadget_decompose(u64 x, u64 q, int log_z, int t, std::int64_t* digits) {
  const u64 upper = u64{0} - static_cast<u64>(x > q / 2);
  std::int64_t v = static_cast<std::int64_t>(x) - static_cast<std::int64_t>(q & upper);
  const std::int64_t half = std::int64_t{1} << (log_z - 1);
  const std::int64_t mask = (std::int64_t{1} << log_z) - 1;
  for (int j = 0; j < t; ++j) {
    const std::int64_t dj = ((v + half) & mask) - half;
    digits[j] = dj;
    v = (v - dj) >> log_z;
  }
}

PackPrecomp PackPrecomp::build(const HintlessRing& ring, std::span<const u64> leaf_a,
                               std::span<const u64> key_a) {
  PackPrecomp pre;
  const std::size_t d = ring.d();
  pre.nodes_ = d - 1;
  pre.stride_ = static_cast<std::size_t>(ring.params().gadget_digits) * 2 * d;
  pre.digits_.resize(pre.nodes_ * pre.stride_);
  pre.output_a_.resize(2 * d);
  PrecompBuilder builder(ring, leaf_a, key_a, pre.digits_);
  builder.node(ring.log_d(), 0, pre.output_a_.data());
  return pre;
}

void pack_online(const HintlessRing& ring, const PackPrecomp& pre,
                 std::span<const u64* const> leaf_b, std::span<const PackingKeyView> keys,
                 std::span<u64* const> out, int prime, PackScratch* scratch) {
  PackScratch own;
  for (int p = 0; p < 2; ++p) {
    if (prime >= 0 && p != prime) continue;
    OnlinePacker packer(ring, pre, leaf_b, keys, p, scratch != nullptr ? *scratch : own);
    packer.node(ring.log_d(), 0, out);
    // The tree carries values in [0, 2q) (kernels.h); the root leaves fully reduced.
    const u64 q = ring.prime(p);
    const std::size_t off = static_cast<std::size_t>(p) * ring.d();
    for (u64* o : out) {
      for (std::size_t i = 0; i < ring.d(); ++i) o[off + i] = ring::reduce_once(o[off + i], q);
    }
  }
}

}  // namespace privsearch::pir::hintless
