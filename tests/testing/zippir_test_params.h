// ZipPIR parameters for tests: insecure sizes keep them fast (LWE n = 64, 512-bit Paillier).
#pragma once

#include "pir/zippir/zippir.h"

namespace privsearch::testing {

inline pir::ZipPirParams zippir_test_params(int paillier_bits = 512, int hint_bits = 16) {
  pir::ZipPirParams p;
  p.lwe = *pir::find_lwe_params("insecure-test-n64-binary", true);
  p.paillier_bits = paillier_bits;
  p.hint_bits = hint_bits;
  p.allow_insecure = true;
  return p;
}

}  // namespace privsearch::testing
