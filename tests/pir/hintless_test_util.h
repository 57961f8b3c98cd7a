// Shared by the hintless PIR tests: the parameter sets they run on, random records, small
// polynomials.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/csprng.h"
#include "pir/hintless/params.h"
#include "pir/hintless/server.h"
#include "pir/lwe/lwe.h"

namespace privsearch::pir::hintless::test_util {

inline HintlessParams test_params() {
  return *find_hintless_params("insecure-test-ypir-sp-d256", true);
}
inline HintlessParams secure_params() { return *find_hintless_params("ypir-sp-d2048"); }

inline std::vector<std::vector<std::uint8_t>> random_records(std::size_t n, std::size_t max_bytes,
                                                             std::uint64_t stream,
                                                             bool vary = true) {
  Prng prng = Prng::from_seed(Seed{7}, stream);
  std::vector<std::vector<std::uint8_t>> out(n);
  for (auto& r : out) {
    r.resize(vary ? 1 + prng.uniform_below(max_bytes) : max_bytes);
    prng.fill(r);
  }
  return out;
}

inline HintlessServer::RecordSource source(const std::vector<std::vector<std::uint8_t>>& records) {
  return [&records](std::size_t i) { return std::span<const std::uint8_t>(records[i]); };
}

inline std::vector<std::int64_t> small_poly(std::size_t d, Prng& prng, double sigma = 6.4) {
  const GaussianSampler g(sigma);
  std::vector<std::int64_t> v(d);
  for (auto& x : v) x = g.sample(prng);
  return v;
}
}  // namespace privsearch::pir::hintless::test_util
