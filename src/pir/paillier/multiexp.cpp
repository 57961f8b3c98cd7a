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

namespace {

std::size_t window_digit(const mpz_class& e, std::size_t w, int c) {
  std::size_t d = 0;
  for (int t = c - 1; t >= 0; --t) {
    d = (d << 1) | static_cast<std::size_t>(
                       mpz_tstbit(e.get_mpz_t(), w * static_cast<std::size_t>(c) +
                                                     static_cast<std::size_t>(t)));
  }
  return d;
}

}  // namespace

mpz_class multi_exp_batched(const MontgomeryBatch& mb, std::span<const mpz_class> bases,
                            std::span<const mpz_class> exponents) {
  PRIVSEARCH_CHECK(bases.size() == exponents.size(), "multi_exp: size mismatch");
  const mpz_class& modulus = mb.modulus();
  std::size_t bits = 0;
  for (const auto& e : exponents) {
    PRIVSEARCH_CHECK(e >= 0, "multi_exp: negative exponent");
    if (e != 0) bits = std::max(bits, mpz_sizeinbase(e.get_mpz_t(), 2));
  }
  if (bits == 0 || bases.empty()) return mpz_class(1 % modulus);
  const std::size_t L = mb.limbs();
  const std::size_t n = bases.size();
  const int c = pippenger_window(n, bits);
  const std::size_t windows = (bits + static_cast<std::size_t>(c) - 1) / static_cast<std::size_t>(c);
  const std::size_t nb = (std::size_t{1} << c) - 1;  // buckets for digits 1 .. 2^c - 1
  constexpr std::size_t kLanes = MontgomeryBatch::kLanes;
  std::vector<std::uint64_t> base_m(n * L);
  for (std::size_t i = 0; i < n; ++i) mb.to_mont(bases[i], base_m.data() + i * L);
  std::vector<std::uint64_t> one(L);
  mb.one(one.data());
  std::vector<std::uint64_t> window_result(windows * L);
  std::vector<std::uint64_t> bucket(kLanes * nb * L);
  std::vector<std::uint8_t> used(kLanes * nb);
  std::vector<std::uint64_t> running(kLanes * L), sum(kLanes * L);
  const std::uint64_t* a[kLanes];
  const std::uint64_t* b[kLanes];
  std::uint64_t* out[kLanes];
  for (std::size_t w0 = 0; w0 < windows; w0 += kLanes) {
    const std::size_t lanes = std::min(kLanes, windows - w0);
    std::fill(used.begin(), used.end(), 0);
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t count = 0;
      for (std::size_t k = 0; k < lanes; ++k) {
        const std::size_t d = window_digit(exponents[i], w0 + k, c);
        if (d == 0) continue;
        const std::size_t slot = k * nb + d - 1;
        std::uint64_t* bk = bucket.data() + slot * L;
        if (!used[slot]) {
          std::copy(base_m.begin() + i * L, base_m.begin() + (i + 1) * L, bk);
          used[slot] = 1;
        } else {
          a[count] = bk;
          b[count] = base_m.data() + i * L;
          out[count] = bk;
          ++count;
        }
      }
      if (count > 0) mb.mul(a, b, out, count);  // distinct buckets: one per window
    }
    // sum_d d * bucket_d by running products, eight windows in step.
    for (std::size_t k = 0; k < lanes; ++k) {
      std::copy(one.begin(), one.end(), running.begin() + k * L);
      std::copy(one.begin(), one.end(), sum.begin() + k * L);
    }
    for (std::size_t d = nb; d-- > 0;) {
      std::size_t count = 0;
      for (std::size_t k = 0; k < lanes; ++k) {
        if (!used[k * nb + d]) continue;
        a[count] = running.data() + k * L;
        b[count] = bucket.data() + (k * nb + d) * L;
        out[count] = running.data() + k * L;
        ++count;
      }
      if (count > 0) mb.mul(a, b, out, count);
      for (std::size_t k = 0; k < lanes; ++k) {
        a[k] = sum.data() + k * L;
        b[k] = running.data() + k * L;
        out[k] = sum.data() + k * L;
      }
      mb.mul(a, b, out, lanes);
    }
    for (std::size_t k = 0; k < lanes; ++k) {
      std::copy(sum.begin() + k * L, sum.begin() + (k + 1) * L,
                window_result.begin() + (w0 + k) * L);
    }
  }
  // result = prod_w W_w^{2^{c w}} by Horner from the top window.
  std::vector<std::uint64_t> res(window_result.end() - static_cast<std::ptrdiff_t>(L),
                                 window_result.end());
  for (std::size_t w = windows - 1; w-- > 0;) {
    for (int s = 0; s < c; ++s) {
      a[0] = res.data();
      b[0] = res.data();
      out[0] = res.data();
      mb.mul(a, b, out, 1);
    }
    a[0] = res.data();
    b[0] = window_result.data() + w * L;
    out[0] = res.data();
    mb.mul(a, b, out, 1);
  }
  return mb.from_mont(res.data());
}

}  // namespace privsearch::pir
