// The provider's half of the provider-only build check: linked ONLY against
// privsearch_ckks_public (no secret key, key generation, encryption or decryption code).
// Reads params, a Galois key set and a ciphertext from DIR, computes a rotation, a hoisted
// double-hoisted sum of rotations times plaintexts and a compact response, and writes them.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "ckks/compact.h"
#include "ckks/encoder.h"
#include "ckks/evaluator.h"
#include "ckks/galois_keys.h"
#include "ckks/serialization.h"
#include "provider_only/file_bytes.h"

using namespace privsearch;
using namespace privsearch::ckks;

using provider_only::read_file;
using provider_only::write_file;

namespace {
int fail(const Status& s) {
  std::fprintf(stderr, "provider_side: %s\n", s.to_string().c_str());
  return 1;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const std::filesystem::path dir = argv[1];
  auto params = deserialize_params(read_file(dir / "params.bin"));
  if (!params.ok()) return fail(params.status());
  auto keys = deserialize_galois_keys(*params, read_file(dir / "keys.bin"));
  if (!keys.ok()) return fail(keys.status());
  auto ct = deserialize_ciphertext(*params, read_file(dir / "query.bin"));
  if (!ct.ok()) return fail(ct.status());
  const Evaluator evaluator(*params);
  auto rotated = evaluator.rotate(*ct, 1, *keys);
  if (!rotated.ok()) return fail(rotated.status());
  write_file(dir / "rotated.bin", *serialize_ciphertext(*params, *rotated, CiphertextForm::kFull));
  // sum_k rot(ct, k) * w_k with w_k = 1/(k+1), double hoisted, then rescale and compact.
  auto encoder = Encoder::create(*params);
  auto hoisted = evaluator.hoist(*ct);
  if (!encoder.ok() || !hoisted.ok()) return fail(hoisted.status());
  ExtendedCiphertext acc;
  for (int k = 0; k < 3; ++k) {
    auto r = evaluator.rotate_hoisted_extended(*hoisted, k, *keys);
    if (!r.ok()) return fail(r.status());
    std::vector<double> w(params->slots(), 1.0 / (k + 1));
    auto pw = encoder->encode_extended(w, ct->level(), params->default_scale());
    if (!pw.ok()) return fail(pw.status());
    const Status s = evaluator.multiply_plain_accumulate(acc, *r, *pw);
    if (!s.ok()) return fail(s);
  }
  auto sum = evaluator.mod_down(acc);
  if (!sum.ok()) return fail(sum.status());
  auto rescaled = evaluator.rescale(*sum);
  if (!rescaled.ok()) return fail(rescaled.status());
  auto compacted = compact(*params, *rescaled, CompactOptions{4.0, 18.0});
  if (!compacted.ok()) return fail(compacted.status());
  write_file(dir / "response.bin", serialize_compact(*compacted));
  std::printf("provider_side: rotated and compacted with public material only\n");
  return 0;
}
