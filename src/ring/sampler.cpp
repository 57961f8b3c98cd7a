#include "ring/sampler.h"

#include <bit>

namespace privsearch::ring {

void sample_uniform_rows(Prng& prng, std::span<const Modulus> moduli, RnsPoly& out) {
  PRIVSEARCH_CHECK(out.num_moduli() >= moduli.size(), "too few RNS rows");
  const std::size_t n = out.n();
  for (std::size_t i = 0; i < moduli.size(); ++i) {
    const u64 q = moduli[i].value();
    const u64 mask = (u64{1} << moduli[i].bit_count()) - 1;
    u64* row = out.row(i);
    for (std::size_t j = 0; j < n;) {
      const u64 v = prng.next_u64() & mask;
      if (v < q) row[j++] = v;
    }
  }
}

void sample_ternary(Prng& prng, SecureVector<std::int64_t>& out) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    const u64 r = prng.next_u64();
    out[i] = static_cast<std::int64_t>(mul_hi(r, 3)) - 1;
  }
}

void sample_cbd(Prng& prng, int eta, SecureVector<std::int64_t>& out) {
  PRIVSEARCH_CHECK(eta >= 1 && eta <= 32, "CBD eta outside [1, 32]");
  const u64 mask = (u64{1} << eta) - 1;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const u64 r = prng.next_u64();
    out[i] = static_cast<std::int64_t>(std::popcount(r & mask)) -
             static_cast<std::int64_t>(std::popcount((r >> 32) & mask));
  }
}

void small_to_rns(std::span<const std::int64_t> small, std::span<const Modulus> moduli,
                  RnsPoly& out) {
  PRIVSEARCH_CHECK(out.n() == small.size() && out.num_moduli() >= moduli.size(),
                   "small_to_rns shape mismatch");
  for (std::size_t i = 0; i < moduli.size(); ++i) {
    const u64 q = moduli[i].value();
    u64* row = out.row(i);
    for (std::size_t j = 0; j < small.size(); ++j) {
      // small values: |x| < q, so x + (q if x < 0) is the residue.
      const u64 x = static_cast<u64>(small[j]);
      row[j] = x + (q & (u64{0} - (x >> 63)));
    }
  }
  out.set_ntt(false);
}

void signed_to_rns(std::span<const std::int64_t> values, std::span<const Modulus> moduli,
                   RnsPoly& out) {
  PRIVSEARCH_CHECK(out.n() == values.size() && out.num_moduli() >= moduli.size(),
                   "signed_to_rns shape mismatch");
  for (std::size_t i = 0; i < moduli.size(); ++i) {
    const Modulus& q = moduli[i];
    u64* row = out.row(i);
    for (std::size_t j = 0; j < values.size(); ++j) {
      const u64 x = static_cast<u64>(values[j]);
      const u64 sign = x >> 63;
      const u64 mag = (x ^ (u64{0} - sign)) + sign;  // |x|
      const u64 r = q.reduce(mag);
      const u64 neg = q.neg(r);
      row[j] = r ^ ((r ^ neg) & (u64{0} - sign));
    }
  }
  out.set_ntt(false);
}

}  // namespace privsearch::ring
