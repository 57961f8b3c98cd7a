// The client-independent hint of the first layer, H = D A (YPIR section 4.1), in the form the
// packing consumes: for row r, the RLWE embedding of the LWE vector H_r, scaled by d^-1.
//
// Math. Query column c = k d + i carries Coeffs(s a_k + e_k)[i], so that entry is <s, A_c> with
// A_c[j] = a_k[i - j] (negacyclic sign for j > i). Writing delta_{r,k}(X) = sum_i D[r][kd+i] X^i
// and conj(P)(X) = P(X^-1):
//   H_r = Coeffs( sum_k conj(a_k) delta_{r,k} )                     (<s, H_r> = sum_c D[r][c] <s,
//   A_c>)
// and the packing embeds the LWE vector a as a~ = sum_j a_j X^-j = conj(a) (so that the constant
// coefficient of b - s a~ is b - <s, a>). Hence the leaf a-part is
//   a~_r = conj(H_r) = sum_k a_k conj(delta_{r,k}),   in NTT form  conj( sum_k conj(a^_k) .
//   NTT(delta_{r,k}) ),
// one forward NTT per (row, k) and one permutation per row, no inverse NTT (YPIR computes the
// same products through NCoeffs, App. B; here q is itself NTT-friendly).
// The d^-1 factor lets the packing's factor d cancel (YPIR Eq. 3.2's delta).
// Thread safety: HintBuilder is immutable after construction; calls may run concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "pir/hintless/database.h"
#include "pir/hintless/ring_context.h"

namespace privsearch::pir::hintless {

class HintBuilder {
 public:
  HintBuilder(const HintlessRing& ring, std::size_t columns);

  // The leaf a-part of row `row` of `db` into `out` (a Poly2, NTT form); scratch: 2d words.
  void leaf_a_part(const HintlessDatabase& db, std::size_t row, u64* out, u64* scratch) const;
  // An update of one row's entries in column block k (delta[i] = new - old entry of column
  // k d + i, zero where nothing changed): adds its contribution to the leaf (the hint is linear
  // in D), one NTT instead of the row's ceil(d0 / d). `leaf` a Poly2 in NTT form.
  void add_block_delta(std::size_t k, std::span<const std::int32_t> delta, u64* leaf,
                       u64* scratch) const;

 private:
  const HintlessRing* ring_;
  std::size_t columns_;
  std::vector<std::vector<u64>> conj_a_;  // conj(a_k) in NTT form, k < ceil(columns / d)
};

}  // namespace privsearch::pir::hintless
