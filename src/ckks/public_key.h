// An RLWE public key (pk0, pk1) = (-a*s + e, a) modulo Q_L * P (the key basis), NTT form.
// `a` is expanded from a seed, so the key serializes as pk0 plus 32 bytes.
// Thread safety: value type (public data).
#pragma once

#include "ckks/params.h"
#include "core/csprng.h"
#include "ring/rns_poly.h"

namespace privsearch::ckks {

class PublicKey {
 public:
  PublicKey() = default;
  PublicKey(const ParamsId& id, ring::RnsPoly pk0, ring::RnsPoly pk1, const Seed& seed)
      : params_id_(id), pk0_(std::move(pk0)), pk1_(std::move(pk1)), seed_(seed) {}

  const ParamsId& params_id() const { return params_id_; }
  const ring::RnsPoly& pk0() const { return pk0_; }
  const ring::RnsPoly& pk1() const { return pk1_; }
  const Seed& seed() const { return seed_; }

  bool operator==(const PublicKey& o) const {
    return params_id_ == o.params_id_ && pk0_ == o.pk0_ && pk1_ == o.pk1_ && seed_ == o.seed_;
  }

 private:
  ParamsId params_id_{};
  ring::RnsPoly pk0_, pk1_;
  Seed seed_{};
};

}  // namespace privsearch::ckks
