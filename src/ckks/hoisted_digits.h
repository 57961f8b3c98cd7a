// The decomposed c1 of one ciphertext for key switching (ckks/internal/key_switch.h), reusable
// across the rotations of a hoist: the public type behind Evaluator::Hoisted.
#pragma once

#include <cstddef>
#include <vector>

#include "ring/rns_poly.h"

namespace privsearch::ckks {

struct HoistedDigits {
  std::size_t level = 0;
  std::vector<ring::RnsPoly> digits;  // one per digit present at the level, each over
                                      // level + 1 + num_p rows, NTT
};

}  // namespace privsearch::ckks
