// Ciphertexts and plaintexts over the extended basis Q_l * P (double hoisting).
//
// An ExtendedCiphertext at level l stands for (X0, X1) over Q_l * P with
// X0 + X1*s = P * (delta*m + e) + e' (mod Q_l P): a rotation whose ModDown was deferred. It
// stores the special-prime rows as they are and the q_i rows divided by P, [X * P^-1]_{q_i}:
// that is what the key inner product produces with keys in evaluation form (galois_keys.h),
// P * c becomes c itself, and ModDown needs no multiplication on those rows. The scaling is
// linear, so sums and plaintext products (same plaintext in every row) are unaffected.
// Sums of products with ExtendedPlaintexts (the same plaintext encoded in all those rows) stay
// in this form, and one ModDown at the end returns an ordinary Ciphertext at level l.
// Thread safety: value types.
#pragma once

#include <cstddef>

#include "ckks/params.h"
#include "ring/rns_poly.h"

namespace privsearch::ckks {

class ExtendedCiphertext {
 public:
  ExtendedCiphertext() = default;
  ExtendedCiphertext(const ParamsId& id, std::size_t level, double scale, ring::RnsPoly c0,
                     ring::RnsPoly c1)
      : params_id_(id), level_(level), scale_(scale), c0_(std::move(c0)), c1_(std::move(c1)) {}
  const ParamsId& params_id() const { return params_id_; }
  std::size_t level() const { return level_; }
  double scale() const { return scale_; }
  const ring::RnsPoly& c0() const { return c0_; }
  const ring::RnsPoly& c1() const { return c1_; }
  ring::RnsPoly& mutable_c0() { return c0_; }
  ring::RnsPoly& mutable_c1() { return c1_; }
  void set_scale(double s) { scale_ = s; }

 private:
  ParamsId params_id_{};
  std::size_t level_ = 0;
  double scale_ = 0;
  ring::RnsPoly c0_, c1_;
};

class ExtendedPlaintext {
 public:
  ExtendedPlaintext() = default;
  ExtendedPlaintext(const ParamsId& id, std::size_t level, double scale, ring::RnsPoly poly)
      : params_id_(id), level_(level), scale_(scale), poly_(std::move(poly)) {}
  const ParamsId& params_id() const { return params_id_; }
  std::size_t level() const { return level_; }
  double scale() const { return scale_; }
  const ring::RnsPoly& poly() const { return poly_; }

 private:
  ParamsId params_id_{};
  std::size_t level_ = 0;
  double scale_ = 0;
  ring::RnsPoly poly_;
};

}  // namespace privsearch::ckks
