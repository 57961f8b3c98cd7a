// Fuzz target: Paillier key and ciphertext decoders. Properties: an accepted public key
// re-serializes byte-identically; an accepted ciphertext is a unit below N^2 and round-trips.
#include "fuzz_pir_common.h"
#include "pir/paillier/paillier_private.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace privsearch;
  using namespace privsearch::pir;
  if (size == 0) return 0;
  const std::span<const std::uint8_t> body(data + 1, size - 1);
  switch (data[0] % 3) {
    case 0: {
      const auto pk = PaillierPublicKey::deserialize(body, true);
      if (pk.ok()) {
        const auto again = pk->serialize();
        PRIVSEARCH_CHECK(
            again.size() == body.size() && std::equal(again.begin(), again.end(), body.begin()),
            "Paillier public key decode/encode is not a bijection");
      }
      break;
    }
    case 1: {
      (void)PaillierPrivateKey::deserialize(body, true);
      break;
    }
    default: {
      static const PaillierKeyPair kp = [] {
        Prng prng = Prng::from_seed(Seed{3});
        return std::move(*paillier_keygen(256, prng, 1, true));
      }();
      const auto c = kp.public_key.ciphertext_from_bytes(body);
      if (c.ok()) {
        PRIVSEARCH_CHECK(kp.public_key.validate_ciphertext(*c).ok(), "accepted a non-unit");
        PRIVSEARCH_CHECK(*kp.private_key.decrypt(*c) < kp.public_key.n(), "decrypt range");
      }
      break;
    }
  }
  return 0;
}
