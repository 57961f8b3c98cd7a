// Fuzz target: rerank request and response decoders. Property: accepted input re-serializes
// byte-identically.
#include "fuzz_common.h"
#include "rerank/messages.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace privsearch;
  const auto q = rerank::deserialize_request({data, size});
  if (q.ok()) {
    const auto again = rerank::serialize_request(*q);
    PRIVSEARCH_CHECK(again.size() == size && std::equal(again.begin(), again.end(), data),
                     "request decode/encode is not a bijection");
    (void)rerank::accept_request(fuzz::fuzz_params(), *q);
  }
  const auto p = rerank::deserialize_response({data, size});
  if (p.ok()) {
    const auto again = rerank::serialize_response(*p);
    PRIVSEARCH_CHECK(again.size() == size && std::equal(again.begin(), again.end(), data),
                     "response decode/encode is not a bijection");
  }
  return 0;
}
