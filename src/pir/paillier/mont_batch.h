// Batched Montgomery multiplication modulo a large odd M (6144-bit N^2 in ZipPIR's offline hint):
// eight independent products per call, one per AVX-512 lane.
//
// Representation: radix 2^52, L = ceil((bits(M) + 2) / 52) limbs, R = 2^(52 L) >= 4M, values kept
// lazily in [0, 2M). Each product is word-serial CIOS Montgomery (Koc, Acar, Kaliski 1996): for
// every limb a_i of a, acc += a_i b + m_i M with m_i = acc_0 (-M^{-1}) mod 2^52, then one limb
// shifts out. With inputs < 2M and 4M <= R the output is < 2M, so no final subtraction. Column
// sums receive at most 4L terms below 2^52, which stay below 2^64 for L <= 2^10, so carries are
// propagated once, at the end.
// The AVX-512 IFMA kernel (vpmadd52luq/huq) holds the eight operands lane-interleaved; a scalar
// kernel with the same arithmetic is the fallback and the test reference. Neither branches on
// operand values.
// Thread safety: immutable after create(); mul() is reentrant.
#pragma once

#include <gmpxx.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"

namespace privsearch::pir {

class MontgomeryBatch {
 public:
  static constexpr std::size_t kLanes = 8;
  static constexpr int kLimbBits = 52;

  static Result<MontgomeryBatch> create(const mpz_class& odd_modulus, bool allow_ifma = true);

  std::size_t limbs() const { return limbs_; }
  const mpz_class& modulus() const { return modulus_; }
  bool uses_ifma() const { return use_ifma_; }

  // a R mod M into `out` (limbs() words); a is reduced mod M first.
  void to_mont(const mpz_class& a, std::uint64_t* out) const;
  // a R^{-1} mod M, fully reduced, from lazy Montgomery limbs.
  mpz_class from_mont(const std::uint64_t* a) const;
  // R mod M: the Montgomery form of 1.
  void one(std::uint64_t* out) const;

  // out[k] = a[k] b[k] R^{-1} mod M (lazy, < 2M) for k < count <= kLanes. Inputs < 2M. Any out[k]
  // may alias a[k] or b[k].
  void mul(const std::uint64_t* const* a, const std::uint64_t* const* b, std::uint64_t* const* out,
           std::size_t count) const;
  // The scalar kernel on one product (reference and fallback).
  void mul_scalar(const std::uint64_t* a, const std::uint64_t* b, std::uint64_t* out) const;

 private:
  MontgomeryBatch() = default;
  mpz_class modulus_;
  mpz_class r_mod_m_;
  mpz_class r_inv_;
  std::size_t limbs_ = 0;
  std::uint64_t k0_ = 0;  // -M^{-1} mod 2^52
  std::vector<std::uint64_t> m_limbs_;
  bool use_ifma_ = false;
};

namespace detail {
bool mont_ifma_compiled();
// Lane-interleaved kernel: a, b, out hold limbs x kLanes words (limb-major); scratch holds
// (2 limbs + 2) x kLanes words.
void mont_mul8_ifma(const std::uint64_t* a, const std::uint64_t* b, const std::uint64_t* m,
                    std::uint64_t k0, std::size_t limbs, std::uint64_t* out,
                    std::uint64_t* scratch);
}  // namespace detail

}  // namespace privsearch::pir
