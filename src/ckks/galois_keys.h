// Key-switching keys and Galois key sets (public objects).
//
// Hybrid key switching (Han-Ki 2020; SEAL's "special prime" variant): the data primes are
// grouped into digits Q_j (Params::num_digits(), one prime each by default). A key switching
// s' -> s holds, for every digit j, a pair over the key basis Q_L * P, NTT form,
//   b_j = -a_j * s + e_j + P * [q_i in Q_j] * s'   (mod q_i),   b_j = -a_j * s + e_j  (mod p_k),
// i.e. the gadget vector is P times the CRT idempotents of the digits. The uniform a_j are expanded
// from one 32-byte seed (stream j), so a key serializes as its b_j plus the seed.
// A Galois key for element g switches from sigma_g(s) to s; rotating slots left by k uses
// g = 5^k mod 2n, conjugation g = 2n - 1.
// A GaloisKeys set carries its params id, the explicit list of steps it was generated for and
// whether it has the conjugation key; asking for any other step is a kNotFound error (a missing
// step is never derived from others silently).
// Thread safety: immutable after construction.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "ckks/params.h"
#include "core/bytes.h"
#include "core/csprng.h"
#include "core/status.h"
#include "ring/rns_poly.h"

namespace privsearch::ckks {

class KeySwitchKey {
 public:
  KeySwitchKey() = default;
  // b, a: params.num_digits() digits over the full key basis, NTT form (the canonical key).
  // The key keeps them in evaluation form: the q_i rows multiplied by [P^-1]_{q_i}, ModDown's
  // factor, so that the inner product's q rows come out already divided by P and ModDown needs
  // no multiplication there (key_switch.h); the P rows as they are. With the Shoup (or IFMA
  // Montgomery) companions the inner product reads (derived data; not serialized).
  KeySwitchKey(const Params& params, std::vector<ring::RnsPoly> b, std::vector<ring::RnsPoly> a,
               const Seed& seed);
  // Digit j's canonical b_j over the full key basis (what serialization writes).
  ring::RnsPoly b(const Params& params, std::size_t j) const;
  // Digit j's evaluation form and companions (see above).
  const ring::RnsPoly& eval_b(std::size_t j) const { return b_[j]; }
  const ring::RnsPoly& eval_a(std::size_t j) const { return a_[j]; }
  const ring::RnsPoly& eval_b_shoup(std::size_t j) const { return b_shoup_[j]; }
  const ring::RnsPoly& eval_a_shoup(std::size_t j) const { return a_shoup_[j]; }
  std::size_t digits() const { return b_.size(); }
  const Seed& seed() const { return seed_; }
  bool operator==(const KeySwitchKey& o) const {
    return b_ == o.b_ && a_ == o.a_ && seed_ == o.seed_;
  }

 private:
  std::vector<ring::RnsPoly> b_, a_, b_shoup_, a_shoup_;  // evaluation form
  Seed seed_{};
};

// The uniform halves of a key-switching key: a_j = expand(seed, stream j) over the key basis.
std::vector<ring::RnsPoly> expand_key_switch_uniform(const Params& params, const Seed& seed);

class GaloisKeys {
 public:
  GaloisKeys() = default;
  GaloisKeys(const ParamsId& id, std::vector<int> steps, bool conjugate,
             std::map<std::uint64_t, KeySwitchKey> keys)
      : params_id_(id), steps_(std::move(steps)), conjugate_(conjugate), keys_(std::move(keys)) {}

  const ParamsId& params_id() const { return params_id_; }
  const std::vector<int>& steps() const { return steps_; }
  bool has_conjugate() const { return conjugate_; }
  std::size_t size() const { return keys_.size(); }
  const std::map<std::uint64_t, KeySwitchKey>& keys() const { return keys_; }
  // Bytes the set occupies in memory: per key and digit, b and a in evaluation form and their
  // Shoup companions over the key basis (4 x 8 bytes per coefficient; the wire carries b only,
  // packed to the primes' widths, so memory is ~4 x 64 / (mean prime bits) x the upload).
  std::size_t memory_bytes() const;

  // The key for a Galois element, or kNotFound naming the step/element.
  Result<const KeySwitchKey*> key_for_elt(std::uint64_t galois_elt) const;
  // The key for rotating left by `step` (normalized modulo slots), or kNotFound.
  Result<const KeySwitchKey*> key_for_step(int step, std::size_t n) const;

  bool operator==(const GaloisKeys& o) const {
    return params_id_ == o.params_id_ && steps_ == o.steps_ && conjugate_ == o.conjugate_ &&
           keys_ == o.keys_;
  }

 private:
  ParamsId params_id_{};
  std::vector<int> steps_;
  bool conjugate_ = false;
  std::map<std::uint64_t, KeySwitchKey> keys_;
};

// Normalizes a rotation step to [0, slots); 0 means no rotation.
int normalize_step(int step, std::size_t slots);

// Serialization (seeded form: b_j rows and the seed per key). Same header and checks as
// ckks/serialization.h; the decoder rejects duplicate or inconsistent steps and caps the number
// of keys at `max_keys` before allocating.
std::vector<std::uint8_t> serialize_galois_keys(const Params& params, const GaloisKeys& keys);
Result<GaloisKeys> deserialize_galois_keys(const Params& params,
                                           std::span<const std::uint8_t> bytes,
                                           std::size_t max_keys = 4096);
// An upper bound on memory_bytes() of whatever deserialize_galois_keys makes of
// `serialized_bytes` bytes (the key count a body of that size can hold), so a cache can reserve
// the memory before decoding.
std::size_t galois_keys_memory_bound(const Params& params, std::size_t serialized_bytes);

}  // namespace privsearch::ckks
