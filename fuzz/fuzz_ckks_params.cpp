// Fuzz target: CKKS params decoder. Property: anything accepted re-serializes to the same bytes.
#include "ckks/serialization.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace privsearch;
  const auto r = ckks::deserialize_params({data, size});
  if (r.ok()) {
    const auto again = ckks::serialize_params(*r);
    PRIVSEARCH_CHECK(again.size() == size && std::equal(again.begin(), again.end(), data),
                     "params decode/encode is not a bijection");
  }
  return 0;
}
