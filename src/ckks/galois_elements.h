// Galois elements by name, for the layers above ckks that may not include ring/ directly: the
// rotation step of an element (sigma_g with g = 5^step mod 2n is a left rotation of the slots
// by step) and the element of a step. The packed rerank kernel names its automorphisms
// sigma_{2^j + 1} this way (every such g is a power of 5 for j >= 2).
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "ring/automorphism.h"

namespace privsearch::ckks {

// The step k with 5^k = g mod 2n, or kNotFound when g is not a power of 5.
inline Result<int> step_for_galois_elt(std::uint64_t galois_elt, std::size_t n) {
  return ring::step_for_galois_elt(galois_elt, n);
}

}  // namespace privsearch::ckks
