// Fuzz target: compact-ciphertext decoder. Property: accepted input re-serializes identically.
#include "ckks/compact.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace privsearch;
  const auto& params = fuzz::fuzz_params();
  const auto r = ckks::deserialize_compact(params, {data, size});
  if (r.ok()) {
    const auto again = ckks::serialize_compact(*r);
    PRIVSEARCH_CHECK(again.size() == size && std::equal(again.begin(), again.end(), data),
                     "compact decode/encode is not a bijection");
  }
  return 0;
}
