// An encoded CKKS message: a polynomial of R_{Q_l} in NTT form with its scale.
// Invariants: poly has level + 1 rows, each reduced mod q_i, in NTT form.
// Thread safety: value type.
#pragma once

#include <cstddef>

#include "ckks/params.h"
#include "ring/rns_poly.h"

namespace privsearch::ckks {

class Plaintext {
 public:
  Plaintext() = default;
  Plaintext(const ParamsId& id, std::size_t level, double scale, ring::RnsPoly poly)
      : params_id_(id), level_(level), scale_(scale), poly_(std::move(poly)) {}

  const ParamsId& params_id() const { return params_id_; }
  std::size_t level() const { return level_; }
  double scale() const { return scale_; }
  const ring::RnsPoly& poly() const { return poly_; }
  ring::RnsPoly& mutable_poly() { return poly_; }

  bool operator==(const Plaintext& o) const {
    return params_id_ == o.params_id_ && level_ == o.level_ && scale_ == o.scale_ &&
           poly_ == o.poly_;
  }

 private:
  ParamsId params_id_{};
  std::size_t level_ = 0;
  double scale_ = 0;
  ring::RnsPoly poly_;
};

}  // namespace privsearch::ckks
