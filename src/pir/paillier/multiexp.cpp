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
    const double windows =
        static_cast<double>((bits + static_cast<std::size_t>(c) - 1) / static_cast<std::size_t>(c));
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
    mpz_powm(t.get_mpz_t(), bases[i].get_mpz_t(), exponents[i].get_mpz_t(), modulus.get_mpz_t());
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
  const std::size_t windows =
      (bits + static_cast<std::size_t>(c) - 1) / static_cast<std::size_t>(c);
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
        digit = (digit << 1) | static_cast<unsigned long>(mpz_tstbit(
                                   exponents[i].get_mpz_t(),
                                   w * static_cast<std::size_t>(c) + static_cast<std::size_t>(t)));
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
    d = (d << 1) |
        static_cast<std::size_t>(mpz_tstbit(
            e.get_mpz_t(), w * static_cast<std::size_t>(c) + static_cast<std::size_t>(t)));
  }
  return d;
}

}  // namespace

namespace {

// Pippenger's bucket method over up to eight windows at once (one per Montgomery lane):
// window_result[w] = prod_d bucket_{w,d}^d, with bucket_{w,d} the product of the bases whose
// digit in window w is d.
class BucketWindows {
 public:
  BucketWindows(const MontgomeryBatch& mb, std::size_t n, int c)
      : mb_(mb),
        L_(mb.limbs()),
        n_(n),
        c_(c),
        nb_((std::size_t{1} << c) - 1),
        bucket_(kLanes * nb_ * L_),
        used_(kLanes * nb_),
        running_(kLanes * L_),
        sum_(kLanes * L_),
        one_(L_) {
    mb.one(one_.data());
  }

  // Windows w0 .. w0 + lanes - 1 into window_result.
  void run(std::span<const mpz_class> exponents, const std::vector<std::uint64_t>& base_m,
           std::size_t w0, std::size_t lanes, std::vector<std::uint64_t>& window_result) {
    fill_buckets(exponents, base_m, w0, lanes);
    // sum_d d * bucket_d by running products, eight windows in step.
    for (std::size_t k = 0; k < lanes; ++k) {
      std::copy(one_.begin(), one_.end(), running_.begin() + k * L_);
      std::copy(one_.begin(), one_.end(), sum_.begin() + k * L_);
    }
    for (std::size_t d = nb_; d-- > 0;) {
      std::size_t count = 0;
      for (std::size_t k = 0; k < lanes; ++k) {
        if (!used_[k * nb_ + d]) continue;
        set(count++, running_.data() + k * L_, bucket_.data() + (k * nb_ + d) * L_,
            running_.data() + k * L_);
      }
      if (count > 0) mb_.mul(a_, b_, out_, count);
      for (std::size_t k = 0; k < lanes; ++k) {
        set(k, sum_.data() + k * L_, running_.data() + k * L_, sum_.data() + k * L_);
      }
      mb_.mul(a_, b_, out_, lanes);
    }
    for (std::size_t k = 0; k < lanes; ++k) {
      std::copy(sum_.begin() + k * L_, sum_.begin() + (k + 1) * L_,
                window_result.begin() + (w0 + k) * L_);
    }
  }

 private:
  static constexpr std::size_t kLanes = MontgomeryBatch::kLanes;

  void set(std::size_t i, const std::uint64_t* x, const std::uint64_t* y, std::uint64_t* o) {
    a_[i] = x;
    b_[i] = y;
    out_[i] = o;
  }

  void fill_buckets(std::span<const mpz_class> exponents, const std::vector<std::uint64_t>& base_m,
                    std::size_t w0, std::size_t lanes) {
    std::fill(used_.begin(), used_.end(), 0);
    for (std::size_t i = 0; i < n_; ++i) {
      std::size_t count = 0;
      for (std::size_t k = 0; k < lanes; ++k) {
        const std::size_t d = window_digit(exponents[i], w0 + k, c_);
        if (d == 0) continue;
        const std::size_t slot = k * nb_ + d - 1;
        std::uint64_t* bk = bucket_.data() + slot * L_;
        if (!used_[slot]) {
          std::copy(base_m.begin() + i * L_, base_m.begin() + (i + 1) * L_, bk);
          used_[slot] = 1;
        } else {
          set(count++, bk, base_m.data() + i * L_, bk);
        }
      }
      if (count > 0) mb_.mul(a_, b_, out_, count);  // distinct buckets: one per window
    }
  }

  const MontgomeryBatch& mb_;
  std::size_t L_, n_;
  int c_;
  std::size_t nb_;  // buckets for digits 1 .. 2^c - 1
  std::vector<std::uint64_t> bucket_;
  std::vector<std::uint8_t> used_;
  std::vector<std::uint64_t> running_, sum_, one_;
  const std::uint64_t* a_[kLanes];
  const std::uint64_t* b_[kLanes];
  std::uint64_t* out_[kLanes];
};

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
  const std::size_t windows =
      (bits + static_cast<std::size_t>(c) - 1) / static_cast<std::size_t>(c);
  std::vector<std::uint64_t> base_m(n * L);
  for (std::size_t i = 0; i < n; ++i) mb.to_mont(bases[i], base_m.data() + i * L);
  std::vector<std::uint64_t> window_result(windows * L);
  BucketWindows buckets(mb, n, c);
  for (std::size_t w0 = 0; w0 < windows; w0 += MontgomeryBatch::kLanes) {
    buckets.run(exponents, base_m, w0, std::min(MontgomeryBatch::kLanes, windows - w0),
                window_result);
  }
  // result = prod_w W_w^{2^{c w}} by Horner from the top window.
  std::vector<std::uint64_t> res(window_result.end() - static_cast<std::ptrdiff_t>(L),
                                 window_result.end());
  const std::uint64_t* a[1];
  const std::uint64_t* b[1];
  std::uint64_t* out[1] = {res.data()};
  for (std::size_t w = windows - 1; w-- > 0;) {
    a[0] = res.data();
    b[0] = res.data();
    for (int s = 0; s < c; ++s) mb.mul(a, b, out, 1);
    b[0] = window_result.data() + w * L;
    mb.mul(a, b, out, 1);
  }
  return mb.from_mont(res.data());
}

}  // namespace privsearch::pir
