// The client's half of the provider-only build check. `client_side gen DIR` writes params, a
// Galois key set and an encrypted query; `client_side verify DIR` decrypts the provider's
// outputs and checks them against plaintext arithmetic. The secret key is re-derived from a
// fixed test seed in both runs (tests only).
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ckks/client/compact_decryptor.h"
#include "ckks/client/decryptor.h"
#include "ckks/client/encryptor.h"
#include "ckks/client/keygen.h"
#include "ckks/encoder.h"
#include "ckks/param_sets.h"
#include "ckks/serialization.h"
#include "provider_only/file_bytes.h"

using namespace privsearch;
using namespace privsearch::ckks;

using provider_only::read_file;
using provider_only::write_file;

namespace {
std::vector<double> query_values(std::size_t slots) {
  std::vector<double> v(slots);
  for (std::size_t i = 0; i < slots; ++i) v[i] = std::sin(0.37 * static_cast<double>(i));
  return v;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const std::string mode = argv[1];
  const std::filesystem::path dir = argv[2];
  const Params params = *Params::create(ifma_n8192_literal());
  Seed seed{};
  seed[0] = 0x5e;
  Prng key_prng = Prng::from_seed(seed, 1);
  const KeyGenerator keygen(params);
  const SecretKey sk = keygen.create_secret_key(key_prng);
  const Encoder encoder = *Encoder::create(params);
  const auto v = query_values(params.slots());
  if (mode == "gen") {
    std::filesystem::create_directories(dir);
    const std::vector<int> steps = {1, 2};
    const auto gk = *keygen.create_galois_keys(sk, steps, false, key_prng);
    Prng prng = Prng::create();
    const auto pt = *encoder.encode(v, 1, params.default_scale());
    const auto ct = *Encryptor(params).encrypt_symmetric(sk, pt, prng);
    write_file(dir / "params.bin", serialize_params(params));
    write_file(dir / "keys.bin", serialize_galois_keys(params, gk));
    write_file(dir / "query.bin", *serialize_ciphertext(params, ct, CiphertextForm::kSeeded));
    return 0;
  }
  if (mode != "verify") return 2;
  const std::size_t s = params.slots();
  const auto rotated = *deserialize_ciphertext(params, read_file(dir / "rotated.bin"));
  const auto got_rot = *encoder.decode(*Decryptor(params).decrypt(sk, rotated));
  const auto response = *deserialize_compact(params, read_file(dir / "response.bin"));
  const auto got_sum = *CompactDecryptor(params).decrypt_decode(sk, encoder, response);
  double err_rot = 0, err_sum = 0;
  for (std::size_t i = 0; i < s; ++i) {
    err_rot = std::fmax(err_rot, std::fabs(got_rot[i] - v[(i + 1) % s]));
    const double expected = v[i] + v[(i + 1) % s] / 2 + v[(i + 2) % s] / 3;
    err_sum = std::fmax(err_sum, std::fabs(got_sum[i] - expected));
  }
  std::printf("client_side: rotation error %.3g, sum-of-rotations error %.3g\n", err_rot, err_sum);
  return err_rot < 1e-6 && err_sum < 4 * std::ldexp(1.0, -17) ? 0 : 1;
}
