// NTT micro-benchmarks per path and prime size; each loop ends with a round-trip check.
#include <benchmark/benchmark.h>

#include <vector>

#include "core/csprng.h"
#include "ring/ntt.h"
#include "ring/primes.h"

namespace {
using namespace privsearch;
using namespace privsearch::ring;

void BM_NttForward(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const int bits = static_cast<int>(state.range(1));
  const auto path = static_cast<NttPath>(state.range(2));
  const auto q = *Modulus::create(largest_ntt_primes(bits, n, 1).value()[0]);
  const auto t = *NttTables::create(n, q);
  if (!t.supports(path)) {
    state.SkipWithError("path not supported on this CPU/prime");
    return;
  }
  Prng prng = Prng::from_seed(Seed{}, 1);
  std::vector<std::uint64_t> a(n);
  for (auto& x : a) x = prng.uniform_below(q.value());
  const auto original = a;
  for (auto _ : state) {
    t.forward(a.data(), path);
    t.inverse(a.data(), path);
    benchmark::DoNotOptimize(a.data());
  }
  if (a != original) state.SkipWithError("forward/inverse round trip failed");
  state.SetLabel(std::string(ntt_path_name(path)) + " (forward + inverse)");
}
BENCHMARK(BM_NttForward)
    ->ArgsProduct({{4096, 8192, 16384}, {50, 60}, {0, 1, 2}})
    ->Unit(benchmark::kMicrosecond);
}  // namespace
