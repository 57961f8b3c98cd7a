// A CKKS ciphertext (c0, c1) in R_{Q_l}^2, NTT form, with c0 + c1*s = delta*m + e (mod Q_l).
//
// A fresh symmetric encryption has c1 = a expanded from a 32-byte seed; the seed is kept so the
// ciphertext can be serialized in seeded form (c0 and the seed, about half the bytes). Any
// operation that changes c1 returns a ciphertext without a seed.
// Invariants: c0, c1 have level + 1 rows in NTT form; the seed, if present, expands to c1.
// Thread safety: value type.
#pragma once

#include <cstddef>
#include <optional>

#include "ckks/params.h"
#include "core/csprng.h"
#include "ring/rns_poly.h"

namespace privsearch::ckks {

class Ciphertext {
 public:
  Ciphertext() = default;
  Ciphertext(const ParamsId& id, std::size_t level, double scale, ring::RnsPoly c0,
             ring::RnsPoly c1, std::optional<Seed> c1_seed = std::nullopt)
      : params_id_(id),
        level_(level),
        scale_(scale),
        c0_(std::move(c0)),
        c1_(std::move(c1)),
        c1_seed_(c1_seed) {}

  const ParamsId& params_id() const { return params_id_; }
  std::size_t level() const { return level_; }
  double scale() const { return scale_; }
  const ring::RnsPoly& c0() const { return c0_; }
  const ring::RnsPoly& c1() const { return c1_; }
  const std::optional<Seed>& c1_seed() const { return c1_seed_; }
  bool is_seeded() const { return c1_seed_.has_value(); }

  // Mutable access for evaluator code; touching c1 drops the seed.
  ring::RnsPoly& mutable_c0() { return c0_; }
  ring::RnsPoly& mutable_c1() {
    c1_seed_.reset();
    return c1_;
  }
  void set_scale(double scale) { scale_ = scale; }
  void set_level(std::size_t level) { level_ = level; }

  bool operator==(const Ciphertext& o) const {
    return params_id_ == o.params_id_ && level_ == o.level_ && scale_ == o.scale_ &&
           c0_ == o.c0_ && c1_ == o.c1_;
  }

 private:
  ParamsId params_id_{};
  std::size_t level_ = 0;
  double scale_ = 0;
  ring::RnsPoly c0_, c1_;
  std::optional<Seed> c1_seed_;
};

}  // namespace privsearch::ckks
