// Fuzz target: CKKS public-key decoder. Property: accepted input re-serializes byte-identically.
#include "ckks/serialization.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace privsearch;
  const auto& params = fuzz::fuzz_params();
  const auto r = ckks::deserialize_public_key(params, {data, size});
  if (r.ok()) {
    const auto again = ckks::serialize_public_key(params, *r);
    PRIVSEARCH_CHECK(again.size() == size && std::equal(again.begin(), again.end(), data),
                     "public key decode/encode is not a bijection");
  }
  return 0;
}
