// Fuzz target: Galois key-set decoder. Property: accepted input re-serializes byte-identically.
#include "ckks/galois_keys.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace privsearch;
  const auto& params = fuzz::fuzz_params();
  const auto r = ckks::deserialize_galois_keys(params, {data, size}, 64);
  if (r.ok()) {
    const auto again = ckks::serialize_galois_keys(params, *r);
    PRIVSEARCH_CHECK(again.size() == size && std::equal(again.begin(), again.end(), data),
                     "Galois key decode/encode is not a bijection");
  }
  return 0;
}
