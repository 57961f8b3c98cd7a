// Negacyclic number-theoretic transform over Z_q[X]/(X^n + 1).
//
// With psi a primitive 2n-th root of unity mod q, forward() maps coefficients a_0..a_{n-1}
// (standard order) to the evaluations a(psi^(2*brv(i)+1)) at index i, where brv reverses log2(n)
// bits; inverse() undoes it. This is the merged-twist Cooley-Tukey / Gentleman-Sande pair of
// Longa-Naehrig (2016), "Speeding up the NTT...", Algorithms 1 and 2, with Harvey's lazy
// butterflies (Harvey 2014, "Faster arithmetic for number-theoretic transforms"): forward
// values stay in [0, 4q), inverse values in [0, 2q), and one final pass reduces to [0, q).
//
// The AVX-512 kernels are cache-blocked: stages whose butterflies stay inside a 16 KB block run
// block by block while it sits in L1 (an 8192-value polynomial is 64 KB, twice Zen 4's L1D);
// only the stages with larger distances stream the whole array.
// Three implementations with identical results: a portable scalar one (q < 2^62), an AVX-512
// F/DQ one (q < 2^62, approximate high products) and an AVX-512 IFMA one (52-bit multiply-add
// lanes, q < 2^50 so that 4q < 2^52). The path is chosen at run time from CPUID and the size
// of q (IFMA, else AVX-512, else scalar); tests run every path on the same inputs.
// Thread safety: NttTables is immutable after create(). Constant time: yes (no data-dependent
// branches or indices).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "ring/automorphism.h"
#include "ring/modulus.h"

namespace privsearch::ring {

// One row of a ModDown (ckks/internal/poly_util.h), the input of NttTables::forward_mod_down.
// The row's target is
//   out = (x - NTT(y')) * w  [+ addend, read through its permutation if given]   (mod q)
// or, when x is prescaled (x already carries the factor w, e.g. keys stored times P^-1),
//   out = x - NTT(y') * w    [+ addend]                                            (mod q)
// where y', the basis extension of the special-prime part to q, comes in one of three modes,
// each made by its own factory:
//   direct(y)         y' = y                  (y < q, coefficient form)
//   lift(y, p)        y' = the centred lift of y modulo an odd p < 2^62 (y in [0, p), y > p/2
//                     standing for y - p): one special prime
//   conversion(c)     y' = sum_i t_i c_i - u m with c_i = [P/p_i]_q, m = [P]_q: the exact centred
//                     conversion of [x]_P formed in the first stage from the rows every target
//                     shares (ring/rns.h, prepare_centered): several special primes
// x, addend < q in NTT form; out may alias x (not y or addend). forward_mod_down checks the
// operands' ranges.
class ModDownRow {
 public:
  enum class Mode { kDirect, kLift, kConversion };
  static constexpr std::size_t kMaxConvSources = 4;

  struct Target {
    const std::uint64_t* x = nullptr;
    std::uint64_t w = 0;
    std::uint64_t* out = nullptr;
    bool x_prescaled = false;
  };
  struct Conversion {
    const std::uint64_t* t = nullptr;  // `sources` rows of n values, t_i < p_i
    const std::uint64_t* u = nullptr;  // n values, u <= sources
    std::size_t sources = 0;           // at most kMaxConvSources
    const std::uint64_t* c = nullptr;  // `sources` values c_i < q
    std::uint64_t m = 0;               // [P]_q
    std::uint64_t max_source = 0;      // the largest p_i (decides whether IFMA lanes fit)
  };

  static ModDownRow direct(const std::uint64_t* y, const Target& target) {
    return ModDownRow(Mode::kDirect, y, 0, target, {});
  }
  static ModDownRow lift(const std::uint64_t* y, std::uint64_t p, const Target& target) {
    return ModDownRow(Mode::kLift, y, p, target, {});
  }
  static ModDownRow conversion(const Conversion& conv, const Target& target) {
    return ModDownRow(Mode::kConversion, nullptr, 0, target, conv);
  }
  // Adds `addend` to every output value, read through `perm` (Galois permutation in NTT form)
  // when it is not null.
  ModDownRow& with_addend(const std::uint64_t* addend, const GaloisPermutation* perm) {
    addend_ = addend;
    addend_perm_ = addend != nullptr ? perm : nullptr;
    return *this;
  }
  // The same target and addend in direct mode with y' = y (a lift already done elsewhere).
  ModDownRow as_direct(const std::uint64_t* y) const {
    ModDownRow r = *this;
    r.mode_ = Mode::kDirect;
    r.y_ = y;
    r.p_ = 0;
    r.conv_ = {};
    return r;
  }

  Mode mode() const { return mode_; }
  const std::uint64_t* y() const { return y_; }
  std::uint64_t p() const { return p_; }
  const Conversion& conv() const { return conv_; }
  const std::uint64_t* x() const { return target_.x; }
  std::uint64_t w() const { return target_.w; }
  std::uint64_t* out() const { return target_.out; }
  bool x_prescaled() const { return target_.x_prescaled; }
  const std::uint64_t* addend() const { return addend_; }
  const GaloisPermutation* addend_perm() const { return addend_perm_; }

 private:
  ModDownRow(Mode mode, const std::uint64_t* y, std::uint64_t p, const Target& target,
             const Conversion& conv)
      : mode_(mode), y_(y), p_(p), target_(target), conv_(conv) {}
  Mode mode_;
  const std::uint64_t* y_;
  std::uint64_t p_;
  Target target_;
  Conversion conv_;
  const std::uint64_t* addend_ = nullptr;
  const GaloisPermutation* addend_perm_ = nullptr;
};

enum class NttPath { kScalar, kAvx512, kIfma };
std::string_view ntt_path_name(NttPath path);

// True if this CPU has AVX-512F and AVX-512 IFMA (and the binary carries that path).
bool cpu_has_ifma();
// True if this CPU has AVX-512F and AVX-512DQ (and the binary carries that path).
bool cpu_has_avx512dq();

class NttTables {
 public:
  // q must be a prime with q = 1 mod 2n; n a power of two in [2, 2^17].
  static Result<NttTables> create(std::size_t n, const Modulus& q);

  std::size_t n() const { return n_; }
  const Modulus& modulus() const { return q_; }
  std::uint64_t psi() const { return psi_; }
  // The path forward()/inverse() take: IFMA when the CPU has it and q < 2^50, else AVX-512.
  NttPath default_path() const { return default_path_; }
  bool supports(NttPath path) const;

  // In place; input in [0, q) standard order, output in [0, q) bit-reversed order.
  void forward(std::uint64_t* a) const { forward(a, default_path_); }
  // In place; input in [0, q) bit-reversed order, output in [0, q) standard order.
  void inverse(std::uint64_t* a) const { inverse(a, default_path_); }
  // Explicit path (for tests and benchmarks). Precondition: supports(path).
  void forward(std::uint64_t* a, NttPath path) const;
  void inverse(std::uint64_t* a, NttPath path) const;

  // The forward transform fused with the rest of a ModDown row (ModDownRow above): the lift
  // happens in the first stage and the subtraction, scaling and addend in the last, so the row
  // is read and written once instead of three times. scratch: n words (not aliasing the row's
  // arrays). The SIMD paths give the same result as the scalar composition.
  void forward_mod_down(const ModDownRow& row, std::uint64_t* scratch) const {
    forward_mod_down(row, scratch, default_path_);
  }
  void forward_mod_down(const ModDownRow& row, std::uint64_t* scratch, NttPath path) const;

  // Twiddles, exposed for the SIMD kernels: psi^brv(k) and psi^-brv(k) with their Shoup
  // companions for 64-bit (scalar) and 52-bit (IFMA) words. Each array has n entries.
  struct Twiddles {
    std::vector<std::uint64_t> root;          // psi^brv(k) (forward)
    std::vector<std::uint64_t> root_shoup64;  // floor(root * 2^64 / q)
    std::vector<std::uint64_t> root_shoup52;  // floor(root * 2^52 / q), only if q < 2^50
    std::vector<std::uint64_t> inv_root;      // psi^-brv(k) (inverse)
    std::vector<std::uint64_t> inv_root_shoup64;
    std::vector<std::uint64_t> inv_root_shoup52;
  };
  const Twiddles& twiddles() const { return tw_; }
  std::uint64_t n_inv() const { return n_inv_; }
  std::uint64_t n_inv_shoup64() const { return n_inv_shoup64_; }
  std::uint64_t n_inv_shoup52() const { return n_inv_shoup52_; }
  // psi^-brv(1) * n^-1, the last inverse stage's twiddle with the 1/n scaling folded in.
  std::uint64_t last_inv_root_scaled() const { return last_scaled_; }
  std::uint64_t last_inv_root_scaled_shoup64() const { return last_scaled_shoup64_; }
  std::uint64_t last_inv_root_scaled_shoup52() const { return last_scaled_shoup52_; }

 private:
  NttTables(const Modulus& q) : q_(q) {}
  std::size_t n_ = 0;
  int log_n_ = 0;
  Modulus q_;
  std::uint64_t psi_ = 0;
  Twiddles tw_;
  std::uint64_t n_inv_ = 0, n_inv_shoup64_ = 0, n_inv_shoup52_ = 0;
  std::uint64_t last_scaled_ = 0, last_scaled_shoup64_ = 0, last_scaled_shoup52_ = 0;
  NttPath default_path_ = NttPath::kScalar;
};

// Bit reversal of the low `bits` bits of x.
inline std::size_t reverse_bits(std::size_t x, int bits) {
  std::size_t r = 0;
  for (int i = 0; i < bits; ++i) {
    r = (r << 1) | (x & 1);
    x >>= 1;
  }
  return r;
}

namespace detail {
void ntt_forward_scalar(const NttTables& t, std::uint64_t* a);
void ntt_inverse_scalar(const NttTables& t, std::uint64_t* a);
void ntt_forward_ifma(const NttTables& t, std::uint64_t* a);
void ntt_inverse_ifma(const NttTables& t, std::uint64_t* a);
bool ifma_compiled();
void ntt_forward_avx512(const NttTables& t, std::uint64_t* a);
void ntt_inverse_avx512(const NttTables& t, std::uint64_t* a);
bool avx512_compiled();
void ntt_forward_mod_down_scalar(const NttTables& t, const ModDownRow& row, std::uint64_t* scratch);
// The first-stage constants of forward_mod_down in one word size (shoup: w -> companion):
// index kf of cx/cy is the -m term of the conversion.
struct ModDownConstants {
  std::uint64_t fx, fx_s, fy, fy_s, w, w_s;
  std::uint64_t cx[ModDownRow::kMaxConvSources + 1], cx_s[ModDownRow::kMaxConvSources + 1];
  std::uint64_t cy[ModDownRow::kMaxConvSources + 1], cy_s[ModDownRow::kMaxConvSources + 1];
};
template <typename Shoup>
ModDownConstants mod_down_constants(const NttTables& t, const ModDownRow& row, Shoup shoup) {
  const Modulus& q = t.modulus();
  ModDownConstants k{};
  k.fx = row.x_prescaled() ? row.w() : 1;
  k.fy = q.mul(t.twiddles().root[1], k.fx);
  k.fx_s = shoup(k.fx);
  k.fy_s = shoup(k.fy);
  k.w = row.w();
  k.w_s = shoup(row.w());
  if (row.mode() == ModDownRow::Mode::kConversion) {
    const auto& conv = row.conv();
    for (std::size_t i = 0; i <= conv.sources; ++i) {
      const std::uint64_t c = i < conv.sources ? conv.c[i] : q.neg(conv.m);
      k.cx[i] = q.mul(c, k.fx);
      k.cy[i] = q.mul(c, k.fy);
      k.cx_s[i] = shoup(k.cx[i]);
      k.cy_s[i] = shoup(k.cy[i]);
    }
  }
  return k;
}
void ntt_forward_mod_down_ifma(const NttTables& t, const ModDownRow& row, std::uint64_t* scratch);
void ntt_forward_mod_down_avx512(const NttTables& t, const ModDownRow& row, std::uint64_t* scratch);
}  // namespace detail

}  // namespace privsearch::ring
