#include "pir/paillier/multiexp.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/check.h"

namespace privsearch::pir {

int pippenger_window(std::size_t n, std::size_t bits) {
  int best_c = 1;
  double best = 1e300;
  for (int c = 1; c <= 16; ++c) {
    const double windows = static_cast<double>((bits + static_cast<std::size_t>(c) - 1) /
                                               static_cast<std::size_t>(c));
    const double cost = windows * (static_cast<double>(n) + 2.0 * std::ldexp(1.0, c));
    if (cost < best) {
      best = cost;
      best_c = c;
    }
  }
  return best_c;
}

mpz_class multi_exp_naive(std::span<const mpz_class> bases, std::span<const mpz_class> exponents,
                          const mpz_class& modulus) {
  PRIVSEARCH_CHECK(bases.size() == exponents.size(), "multi_exp: size mismatch");
  mpz_class acc = 1;
  for (std::size_t i = 0; i < bases.size(); ++i) {
    mpz_class t;
    mpz_powm(t.get_mpz_t(), bases[i].get_mpz_t(), exponents[i].get_mpz_t(),
             modulus.get_mpz_t());
    acc = acc * t % modulus;
  }
  return acc % modulus;
}

mpz_class multi_exp(std::span<const mpz_class> bases, std::span<const mpz_class> exponents,
                    const mpz_class& modulus) {
  PRIVSEARCH_CHECK(bases.size() == exponents.size(), "multi_exp: size mismatch");
  std::size_t bits = 0;
  for (const auto& e : exponents) {
    PRIVSEARCH_CHECK(e >= 0, "multi_exp: negative exponent");
    if (e != 0) bits = std::max(bits, mpz_sizeinbase(e.get_mpz_t(), 2));
  }
  if (bits == 0 || bases.empty()) return mpz_class(1 % modulus);
  const int c = pippenger_window(bases.size(), bits);
  const std::size_t windows = (bits + static_cast<std::size_t>(c) - 1) / static_cast<std::size_t>(c);
  const std::size_t buckets = (std::size_t{1} << c) - 1;  // digits 1 .. 2^c - 1
  std::vector<mpz_class> bucket(buckets);
  std::vector<bool> used(buckets);
  mpz_class result = 1;
  for (std::size_t w = windows; w-- > 0;) {
    for (int s = 0; s < c; ++s) result = result * result % modulus;
    std::fill(used.begin(), used.end(), false);
    for (std::size_t i = 0; i < bases.size(); ++i) {
      unsigned long digit = 0;
      for (int t = c - 1; t >= 0; --t) {
        digit = (digit << 1) |
                static_cast<unsigned long>(mpz_tstbit(exponents[i].get_mpz_t(),
                                                      w * static_cast<std::size_t>(c) +
                                                          static_cast<std::size_t>(t)));
      }
      if (digit == 0) continue;
      if (!used[digit - 1]) {
        bucket[digit - 1] = bases[i];
        used[digit - 1] = true;
      } else {
        bucket[digit - 1] = bucket[digit - 1] * bases[i] % modulus;
      }
    }
    // prod_d bucket_d^d = prod_{d} (prod_{d' >= d} bucket_d') by a running product.
    mpz_class running = 1, window_product = 1;
    bool any = false;
    for (std::size_t d = buckets; d-- > 0;) {
      if (used[d]) {
        running = any ? mpz_class(running * bucket[d] % modulus) : bucket[d];
        any = true;
      }
      if (any) window_product = window_product * running % modulus;
    }
    result = result * window_product % modulus;
  }
  return result;
}

}  // namespace privsearch::pir
