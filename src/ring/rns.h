// RNS bases: a list of pairwise coprime word-size moduli {m_0..m_{k-1}} with product M, and
// the conversions privsearch needs.
//
// CRT: x = sum_i [x_i * (M/m_i)^-1]_{m_i} * (M/m_i) mod M.
// Fast base conversion (Bajard, Eynard, Hasan, Zucca 2016, "A full RNS variant of FV"):
//   conv_B(x)_j = sum_i [x_i * (M/m_i)^-1]_{m_i} * (M/m_i mod b_j) mod b_j
// equals x + u*M for some 0 <= u < k; callers that divide by M afterwards (ModDown) absorb the
// u*M term as a small rounding error.
// Thread safety: immutable after create(). Constant time: the conversions are straight-line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"
#include "ring/modulus.h"

namespace privsearch::ring {

class RnsBase {
 public:
  // Moduli must be distinct primes below 2^62 (pairwise coprime suffices; primes are what
  // privsearch uses).
  static Result<RnsBase> create(std::span<const std::uint64_t> moduli);

  std::size_t size() const { return moduli_.size(); }
  const Modulus& operator[](std::size_t i) const { return moduli_[i]; }
  const std::vector<Modulus>& moduli() const { return moduli_; }
  // [(M/m_i)^-1]_{m_i} and its Shoup companion.
  std::uint64_t punctured_inverse(std::size_t i) const { return punct_inv_[i]; }
  std::uint64_t punctured_inverse_shoup(std::size_t i) const { return punct_inv_shoup_[i]; }
  // M as little-endian 64-bit limbs.
  const std::vector<std::uint64_t>& product() const { return product_; }

  // Centred CRT reconstruction of one residue vector to the nearest double: the result is the
  // representative of x in (-M/2, M/2], rounded to double. `residues` has size() entries.
  double compose_centered(const std::uint64_t* residues, std::size_t stride) const;

 private:
  RnsBase() = default;
  std::vector<Modulus> moduli_;
  std::vector<std::uint64_t> punct_inv_, punct_inv_shoup_;
  std::vector<std::uint64_t> product_;             // M
  std::vector<std::uint64_t> half_product_;        // floor(M/2)
  std::vector<std::vector<std::uint64_t>> punct_;  // M/m_i as limbs (size() limbs each)
};

// Base conversion from base `from` to base `to` (see header), for n coefficients.
//
// convert(): the fast, approximate conversion (result x + u*M, 0 <= u < from.size()).
// convert_centered(): the exact conversion of the centred representative of x, in (-M/2, M/2]:
//   u = round(sum_i t_i / m_i) computed in double precision (Halevi-Polyakov-Shoup 2019,
//   section 2.3) and subtracted as u * [M]_{b_j}. With at most 15 source moduli the double sum
//   is off by less than 2^-40, so u is exact unless the fraction lies within that of 1/2, where
//   either neighbour is still a valid representative. Centring matters: a biased lift multiplies
//   noise by the all-ones polynomial, whose canonical embedding reaches 2n/pi.
class BaseConverter {
 public:
  static Result<BaseConverter> create(const RnsBase& from, const RnsBase& to);
  // in: from.size() rows of n values (row stride n), each < its modulus.
  // out: to.size() rows of n values in [0, to[j]).
  // Only the first `to_count` target moduli are produced (to_count <= to.size()).
  void convert(const std::uint64_t* in, std::uint64_t* out, std::size_t n,
               std::size_t to_count) const;
  // Exact centred conversion; `targets` lists which `to` moduli to produce (out row r is
  // to[targets[r]]).
  void convert_centered(const std::uint64_t* in, std::uint64_t* out, std::size_t n,
                        std::span<const std::size_t> targets) const;
  const RnsBase& from() const { return from_; }
  const RnsBase& to() const { return to_; }

  // convert_centered in two halves, for callers that fuse the per-target sum into other work
  // (ring::NttTables::forward_mod_down): prepare_centered() computes the rows every target
  // shares, t_i = [x_i (M/m_i)^-1]_{m_i} (from.size() rows, stride n) and u = round(sum_i t_i /
  // m_i) (one row, u <= from.size()); then target j is
  //   out_j = sum_i t_i [M/m_i]_{b_j} - u [M]_{b_j}   (mod b_j).
  void prepare_centered(const std::uint64_t* in, std::uint64_t* t, std::uint64_t* u,
                        std::size_t n) const;
  std::uint64_t punctured_mod_to(std::size_t j, std::size_t i) const {
    return punct_mod_to_[j * from_.size() + i];
  }
  std::uint64_t modulus_mod_to(std::size_t j) const { return m_mod_to_[j]; }

 private:
  BaseConverter(RnsBase from, RnsBase to) : from_(std::move(from)), to_(std::move(to)) {}
  RnsBase from_, to_;
  std::vector<std::uint64_t> punct_mod_to_;  // (M/m_i) mod b_j at [j * from.size() + i]
  std::vector<std::uint64_t> punct_mod_to_shoup_;
  bool identity_scaling_ = false;        // one source modulus: (M/m_0)^-1 = 1, t_0 = x_0
  std::vector<std::uint64_t> m_mod_to_;  // [M]_{b_j}
  std::vector<double> inv_from_;         // 1 / m_i
};

}  // namespace privsearch::ring
