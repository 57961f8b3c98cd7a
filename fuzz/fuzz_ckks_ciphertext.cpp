// Fuzz target: CKKS ciphertext decoder (full and seeded forms). Property: accepted input
// re-serializes byte-identically in the form it came in.
#include "ckks/serialization.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace privsearch;
  const auto& params = fuzz::fuzz_params();
  const auto r = ckks::deserialize_ciphertext(params, {data, size});
  if (r.ok()) {
    const auto form = r->is_seeded() ? ckks::CiphertextForm::kSeeded : ckks::CiphertextForm::kFull;
    const auto again = ckks::serialize_ciphertext(params, *r, form);
    PRIVSEARCH_CHECK(again.ok(), "re-serialization of an accepted ciphertext failed");
    PRIVSEARCH_CHECK(again->size() == size && std::equal(again->begin(), again->end(), data),
                     "ciphertext decode/encode is not a bijection");
  }
  return 0;
}
