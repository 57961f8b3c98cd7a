// CKKS micro-benchmarks on the paper's preset; each loop ends with a decryption check.
#include <benchmark/benchmark.h>

#include <cmath>

#include "ckks/client/decryptor.h"
#include "ckks/client/encryptor.h"
#include "ckks/client/keygen.h"
#include "ckks/encoder.h"
#include "ckks/evaluator.h"
#include "ckks/param_sets.h"

namespace {
using namespace privsearch;
using namespace privsearch::ckks;

struct Setup {
  Params params = *Params::create(paper_n8192_literal());
  Encoder encoder = *Encoder::create(params);
  Prng prng = Prng::from_seed(Seed{}, 2);
  SecretKey sk = KeyGenerator(params).create_secret_key(prng);
  std::vector<double> values = std::vector<double>(params.slots(), 0.5);
};

void BM_EncodeEncrypt(benchmark::State& state) {
  Setup s;
  const Encryptor enc(s.params);
  Ciphertext ct;
  for (auto _ : state) {
    const auto pt = *s.encoder.encode(s.values, 1, s.params.default_scale());
    ct = *enc.encrypt_symmetric(s.sk, pt, s.prng);
    benchmark::DoNotOptimize(ct);
  }
  const auto back = *s.encoder.decode(*Decryptor(s.params).decrypt(s.sk, ct));
  if (std::fabs(back[0] - 0.5) > 1e-6) state.SkipWithError("decryption check failed");
}
BENCHMARK(BM_EncodeEncrypt)->Unit(benchmark::kMicrosecond);

void BM_MultiplyPlainRescale(benchmark::State& state) {
  Setup s;
  const auto pt = *s.encoder.encode(s.values, 1, s.params.default_scale());
  const auto ct = *Encryptor(s.params).encrypt_symmetric(s.sk, pt, s.prng);
  const Evaluator ev(s.params);
  Ciphertext out;
  for (auto _ : state) {
    out = *ev.rescale(*ev.multiply_plain(ct, pt));
    benchmark::DoNotOptimize(out);
  }
  const auto back = *s.encoder.decode(*Decryptor(s.params).decrypt(s.sk, out));
  if (std::fabs(back[0] - 0.25) > 1e-6) state.SkipWithError("decryption check failed");
}
BENCHMARK(BM_MultiplyPlainRescale)->Unit(benchmark::kMicrosecond);
}  // namespace
