// The common reference string of the hintless backend: the public, structured first-layer matrix
// A (YPIR Remark 3.2: a_0 .. a_{m-1} in R_q, column k d + i of A being column i of the negacyclic
// matrix of a_k) and the a-rows of the packing key (YPIR Remark A.4: only the b-rows travel).
// Everything is expanded from seed = SHA-256("privsearch-hintless-v1" || params id), so the CRS
// is fixed, the same for every client and replica, checkable by anyone, and has nothing up its
// sleeve. It is safe only because every query draws a fresh secret (InsPIRe section 2.1).
// Polynomials are sampled uniformly and directly in NTT form (the NTT is a bijection).
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <vector>

#include "core/csprng.h"
#include "pir/hintless/ring_context.h"

namespace privsearch::pir::hintless {

Seed hintless_crs_seed(const HintlessParams& params);

// a_k in NTT form (a Poly2).
std::vector<u64> crs_query_poly(const HintlessRing& ring, std::size_t k);
// The a-row of gadget digit j of the level-l automorphism key (l in [1, log d]), NTT form.
std::vector<u64> crs_key_poly(const HintlessRing& ring, int level, int digit);
// All key a-rows, level-major then digit: (log d) t Poly2s, as one array.
std::vector<u64> crs_key_polys(const HintlessRing& ring);

// How many a_k a database of `columns` columns uses: ceil(columns / d).
inline std::size_t crs_query_polys(const HintlessRing& ring, std::size_t columns) {
  return (columns + ring.d() - 1) / ring.d();
}

}  // namespace privsearch::pir::hintless
