// Fuzz target: the packed rerank response decoder (rerank/packed_response.h) and the client's
// decryption of what it accepts. Properties: accepted input re-serializes byte-identically, and
// decryption of any accepted ciphertext either returns K finite scores or a typed error.
#include <cmath>

#include "ckks/client/keygen.h"
#include "fuzz_common.h"
#include "rerank/client/packed_scores.h"
#include "rerank/packed_response.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace privsearch;
  const ckks::Params& params = fuzz::fuzz_packed_params();
  static const auto layout =
      rerank::make_layout(params, rerank::Kernel::kPacked, fuzz::kFuzzPackedDim, fuzz::kFuzzPackedK)
          .value();
  static Prng prng = Prng::from_seed(Seed{}, 9);
  static const ckks::SecretKey sk = ckks::KeyGenerator(params).create_secret_key(prng);
  const auto ct = rerank::deserialize_packed(params, {data, size}, fuzz::kFuzzPackedK);
  if (!ct.ok()) return 0;
  const auto again = rerank::serialize_packed(*ct);
  PRIVSEARCH_CHECK(again.size() == size && std::equal(again.begin(), again.end(), data),
                   "packed decode/encode is not a bijection");
  const std::vector<rerank::PackedCiphertext> outputs{*ct};
  const auto scores = rerank::decrypt_packed_scores(layout, params, sk, outputs);
  if (scores.ok()) {
    PRIVSEARCH_CHECK(scores->size() == fuzz::kFuzzPackedK, "wrong score count");
    for (const double s : *scores) PRIVSEARCH_CHECK(std::isfinite(s), "non-finite score");
  }
  return 0;
}
