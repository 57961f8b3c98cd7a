// Shared test helpers: deterministic PRNG seeds, insecure params, precision in bits.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <complex>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "ckks/param_sets.h"
#include "ckks/params.h"
#include "core/csprng.h"

namespace privsearch::testing {

// A deterministic generator for tests; `label` picks the stream so tests do not share one.
inline Prng test_prng(std::uint64_t label) {
  Seed seed{};
  for (std::size_t i = 0; i < seed.size(); ++i) seed[i] = static_cast<std::uint8_t>(i * 7 + 1);
  return Prng::from_seed(seed, label);
}

// Uniform double in [-1, 1) from the test generator.
inline double uniform_pm1(Prng& p) {
  return static_cast<double>(p.next_u64() >> 11) * 0x1p-52 - 1.0;
}

inline std::vector<double> random_values(Prng& p, std::size_t count) {
  std::vector<double> v(count);
  for (auto& x : v) x = uniform_pm1(p);
  return v;
}

// A random unit vector of dimension d (uniform coordinates in [-1, 1), normalized).
inline std::vector<double> random_unit_vector(Prng& p, std::size_t d) {
  auto v = random_values(p, d);
  double norm = 0;
  for (const double x : v) norm += x * x;
  for (auto& x : v) x /= std::sqrt(norm);
  return v;
}

// log2(1 / max |a_i - b_i|): bits of precision.
inline double precision_bits(std::span<const double> a, std::span<const double> b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::fmax(m, std::fabs(a[i] - b[i]));
  return m == 0 ? 64.0 : -std::log2(m);
}

// A new empty directory under the system's temporary directory, named by `label`, the process
// and a counter (the caller removes it).
inline std::filesystem::path temp_dir(const std::string& label) {
  static std::atomic<int> counter{0};
  auto dir =
      std::filesystem::temp_directory_path() /
      ("privsearch-" + label + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline ckks::Params insecure_params(std::size_t n) {
  return ckks::Params::create(ckks::insecure_test_literal(n)).value();
}
inline ckks::Params paper_params() {
  return ckks::Params::create(ckks::paper_n8192_literal()).value();
}
inline ckks::Params ifma_params() {
  return ckks::Params::create(ckks::ifma_n8192_literal()).value();
}

}  // namespace privsearch::testing
