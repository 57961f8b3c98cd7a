// Shared setup for the decoder fuzz targets: small insecure params (n = 64) so inputs stay a
// few kilobytes and the fuzzer explores structure, not size.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ckks/param_sets.h"
#include "ckks/params.h"
#include "core/check.h"

namespace privsearch::fuzz {

inline const ckks::Params& fuzz_params() {
  static const ckks::Params params = ckks::Params::create(ckks::insecure_test_literal(64)).value();
  return params;
}

}  // namespace privsearch::fuzz
