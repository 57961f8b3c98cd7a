// Homomorphic operations on CKKS ciphertexts (RNS form, NTT domain), public material only.
//
// A ciphertext at level l is (c0, c1) in R_{Q_l}^2 with c0 + c1*s = delta*m + e.
// - add/sub/negate: componentwise; operands must share params id, level and scale.
// - add_plain: c0 + pt (same level and scale); multiply_plain: (c0*pt, c1*pt), scale multiplies.
// - rescale: divide by the last prime q_l with rounding (Cheon et al. 2018, RNS variant):
//     c'_i = (c_i - [c]_{q_l}) * q_l^-1 mod q_i, i < l, with [c]_{q_l} the centred residue;
//   the scale becomes scale / q_l and the level drops by one.
// - mod_switch_to_level: drop primes q_{l'+1}..q_l without scaling (valid because Q_{l'} | Q_l).
// - rotate(ct, k): slot j of the result is slot j + k of the input (left rotation by k,
//   Galois element 5^k); conjugate: complex conjugation of every slot. Both key-switch back to
//   s with the Galois key of that element (internal/key_switch.h); a missing key is kNotFound.
// - hoist + rotate_hoisted: decompose c1 once, then each rotation costs a permutation, an inner
//   product and a ModDown; rotate_hoisted_extended skips the ModDown (double hoisting) for
//   sums of plaintext products that end in one mod_down().
// Errors: kFailedPrecondition for mismatched params id / level / scale / no level left,
// kOutOfRange when a product's scale would not fit the modulus.
// Thread safety: immutable; all methods may run concurrently. Constant time: public data only.
#pragma once

#include <cstddef>
#include <memory>

#include "ckks/ciphertext.h"
#include "ckks/extended.h"
#include "ckks/galois_keys.h"
#include "ckks/hoisted_digits.h"
#include "ckks/params.h"
#include "ckks/plaintext.h"
#include "core/status.h"
#include "ring/automorphism.h"

namespace privsearch::ckks {

class Evaluator {
 public:
  explicit Evaluator(Params params);
  const Params& params() const { return params_; }

  Status add_inplace(Ciphertext& a, const Ciphertext& b) const;
  Status sub_inplace(Ciphertext& a, const Ciphertext& b) const;
  Status negate_inplace(Ciphertext& a) const;
  Status add_plain_inplace(Ciphertext& a, const Plaintext& p) const;
  Status sub_plain_inplace(Ciphertext& a, const Plaintext& p) const;
  Status multiply_plain_inplace(Ciphertext& a, const Plaintext& p) const;
  Status rescale_inplace(Ciphertext& a) const;
  // acc += x * p without a temporary; an empty acc (default-constructed) becomes x * p.
  Status multiply_plain_accumulate(Ciphertext& acc, const Ciphertext& x, const Plaintext& p) const;
  Status mod_switch_to_level_inplace(Ciphertext& a, std::size_t level) const;

  Result<Ciphertext> add(Ciphertext a, const Ciphertext& b) const;
  Result<Ciphertext> sub(Ciphertext a, const Ciphertext& b) const;
  Result<Ciphertext> negate(Ciphertext a) const;
  Result<Ciphertext> add_plain(Ciphertext a, const Plaintext& p) const;
  Result<Ciphertext> multiply_plain(Ciphertext a, const Plaintext& p) const;
  Result<Ciphertext> rescale(Ciphertext a) const;
  Result<Ciphertext> mod_switch_to_level(Ciphertext a, std::size_t level) const;

  Result<Ciphertext> rotate(const Ciphertext& a, int step, const GaloisKeys& keys) const;
  Result<Ciphertext> conjugate(const Ciphertext& a, const GaloisKeys& keys) const;

  // A ciphertext with its c1 decomposed for key switching (see internal/key_switch.h).
  struct Hoisted {
    Ciphertext ct;
    HoistedDigits digits;
  };
  Result<Hoisted> hoist(const Ciphertext& a) const;
  // The same, taking ownership of `a` (no copy of the ciphertext).
  Result<Hoisted> hoist(Ciphertext&& a) const;
  // Rotation by `step` (0 returns the ciphertext itself) from a hoisted decomposition.
  Result<Ciphertext> rotate_hoisted(const Hoisted& h, int step, const GaloisKeys& keys) const;
  // The same rotation left in the extended basis Q_l * P (no ModDown); step 0 gives P * ct.
  Result<ExtendedCiphertext> rotate_hoisted_extended(const Hoisted& h, int step,
                                                     const GaloisKeys& keys) const;
  // P * a in the extended basis (what rotate_hoisted_extended gives for step 0, without the
  // decomposition).
  Result<ExtendedCiphertext> to_extended(const Ciphertext& a) const;
  // acc += x * p (acc may be empty: then acc = x * p). Scales multiply; all must match.
  Status multiply_plain_accumulate(ExtendedCiphertext& acc, const ExtendedCiphertext& x,
                                   const ExtendedPlaintext& p) const;
  Status add_inplace(ExtendedCiphertext& a, const ExtendedCiphertext& b) const;
  // Divides by P (rounding) and returns the ordinary ciphertext at the same level and scale.
  Result<Ciphertext> mod_down(ExtendedCiphertext a) const;

  // Validates a ciphertext's shape against the params (used by every operation).
  Status check_ciphertext(const Ciphertext& c, const char* what) const;
  Status check_plaintext(const Plaintext& p, const char* what) const;

 private:
  const ring::GaloisPermutation& permutation(std::uint64_t galois_elt) const;
  Result<Ciphertext> apply_galois(const Hoisted& h, std::uint64_t galois_elt,
                                  const KeySwitchKey& key) const;

  Params params_;
  struct PermutationCache;
  std::shared_ptr<PermutationCache> perms_;
};

// True if two scales are equal up to a relative 2^-40 (scales are products of primes and
// powers of two; bit-exact equality is too strict after rescaling).
bool scales_match(double a, double b);

}  // namespace privsearch::ckks
