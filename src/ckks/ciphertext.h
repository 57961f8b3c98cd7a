// A CKKS ciphertext (c0, c1) in R_{Q_l}^2, NTT form, with c0 + c1*s = delta*m + e (mod Q_l).
//
// A fresh symmetric encryption has c1 = a expanded from a 32-byte seed; the seed is kept so the
// ciphertext can be serialized in seeded form (c0 and the seed, about half the bytes). Any
// operation that changes c1 returns a ciphertext without a seed.
// Invariants: c0, c1 have level + 1 rows in NTT form (checked by the constructor and by
// drop_to_level and finish_rescale, the only ways the level changes); the seed, if present, expands
// to c1 (any mutable access to c1 drops it). Thread safety: value type.
#pragma once

#include <cstddef>
#include <optional>

#include "ckks/params.h"
#include "core/check.h"
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
        c1_seed_(c1_seed) {
    check_shape();
  }

  const ParamsId& params_id() const { return params_id_; }
  std::size_t level() const { return level_; }
  double scale() const { return scale_; }
  const ring::RnsPoly& c0() const { return c0_; }
  const ring::RnsPoly& c1() const { return c1_; }
  const std::optional<Seed>& c1_seed() const { return c1_seed_; }
  bool is_seeded() const { return c1_seed_.has_value(); }

  // Mutable access for evaluator code, which keeps the row count (level + 1); touching c1 drops
  // the seed.
  ring::RnsPoly& mutable_c0() { return c0_; }
  ring::RnsPoly& mutable_c1() {
    c1_seed_.reset();
    return c1_;
  }
  void set_scale(double scale) { scale_ = scale; }
  // Modulus switching: keeps the first level + 1 rows of c0 and c1 (drops the seed).
  void drop_to_level(std::size_t level) {
    PRIVSEARCH_CHECK(level <= level_, "drop_to_level above the current level");
    c0_.truncate_moduli(level + 1);
    c1_.truncate_moduli(level + 1);
    c1_seed_.reset();
    level_ = level;
    check_shape();
  }
  // After c0 and c1 each lost their last prime (a rescale): one level down at `scale`.
  void finish_rescale(double scale) {
    PRIVSEARCH_CHECK(level_ > 0, "finish_rescale at level 0");
    --level_;
    scale_ = scale;
    check_shape();
  }

  bool operator==(const Ciphertext& o) const {
    return params_id_ == o.params_id_ && level_ == o.level_ && scale_ == o.scale_ && c0_ == o.c0_ &&
           c1_ == o.c1_;
  }

 private:
  void check_shape() const {
    PRIVSEARCH_CHECK(c0_.num_moduli() == level_ + 1 && c1_.num_moduli() == level_ + 1 &&
                         c0_.is_ntt() && c1_.is_ntt(),
                     "Ciphertext: c0 and c1 must have level + 1 rows in NTT form");
  }
  ParamsId params_id_{};
  std::size_t level_ = 0;
  double scale_ = 0;
  ring::RnsPoly c0_, c1_;
  std::optional<Seed> c1_seed_;
};

}  // namespace privsearch::ckks
