#include "pir/hintless_reference.h"

namespace privsearch::pir::hintless::reference {

using u128 = unsigned __int128;

Poly mul(const Poly& a, const Poly& b, std::uint64_t q) {
  const std::size_t d = a.size();
  Poly out(d, 0);
  for (std::size_t i = 0; i < d; ++i) {
    for (std::size_t j = 0; j < d; ++j) {
      const std::uint64_t v = static_cast<std::uint64_t>(static_cast<u128>(a[i]) * b[j] % q);
      const std::size_t k = i + j;
      if (k < d) {
        out[k] = (out[k] + v) % q;
      } else {  // X^d = -1
        out[k - d] = (out[k - d] + q - v) % q;
      }
    }
  }
  return out;
}

Poly add(const Poly& a, const Poly& b, std::uint64_t q) {
  Poly out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = (a[i] + b[i]) % q;
  return out;
}

Poly sub(const Poly& a, const Poly& b, std::uint64_t q) {
  Poly out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = (a[i] + q - b[i]) % q;
  return out;
}

Poly galois(const Poly& a, std::uint64_t g, std::uint64_t q) {
  const std::size_t d = a.size();
  Poly out(d, 0);
  for (std::size_t i = 0; i < d; ++i) {
    const std::size_t e = static_cast<std::size_t>((i * g) % (2 * d));
    if (e < d) {
      out[e] = (out[e] + a[i]) % q;
    } else {
      out[e - d] = (out[e - d] + q - a[i]) % q;
    }
  }
  return out;
}

Poly monomial(std::size_t d, std::size_t k) {
  Poly m(d, 0);
  m[k] = 1;
  return m;
}

Poly from_signed(const std::vector<std::int64_t>& v, std::uint64_t q) {
  Poly out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::int64_t r = v[i] % static_cast<std::int64_t>(q);
    out[i] = static_cast<std::uint64_t>(r < 0 ? r + static_cast<std::int64_t>(q) : r);
  }
  return out;
}

Poly from_poly2_ntt(const HintlessRing& ring, const std::uint64_t* poly2) {
  const std::size_t d = ring.d();
  std::vector<std::uint64_t> tmp(poly2, poly2 + 2 * d);
  ring.inverse(tmp.data());
  Poly out(d);
  const std::uint64_t qa = ring.prime(0), qb = ring.prime(1);
  for (std::size_t i = 0; i < d; ++i) {
    // Garner: x = ra + qa ((rb - ra) qa^-1 mod qb), the inverse by Fermat.
    std::uint64_t inv = 1, base = qa % qb;
    for (std::uint64_t e = qb - 2; e > 0; e >>= 1) {
      if (e & 1) inv = static_cast<std::uint64_t>(static_cast<u128>(inv) * base % qb);
      base = static_cast<std::uint64_t>(static_cast<u128>(base) * base % qb);
    }
    const std::uint64_t diff = (tmp[d + i] + qb - tmp[i] % qb) % qb;
    out[i] = tmp[i] + qa * static_cast<std::uint64_t>(static_cast<u128>(diff) * inv % qb);
  }
  return out;
}

std::vector<std::uint64_t> to_poly2_ntt(const HintlessRing& ring, const Poly& p) {
  const std::size_t d = ring.d();
  std::vector<std::uint64_t> out(2 * d);
  for (std::size_t i = 0; i < d; ++i) {
    out[i] = p[i] % ring.prime(0);
    out[d + i] = p[i] % ring.prime(1);
  }
  ring.forward(out.data());
  return out;
}

Keys make_keys(const HintlessRing& ring, const Poly& s, const std::vector<std::vector<Poly>>& a,
               const std::vector<std::vector<Poly>>& e) {
  const std::uint64_t q = ring.q();
  const int t = ring.params().gadget_digits;
  Keys keys(ring.log_d());
  for (int l = 1; l <= ring.log_d(); ++l) {
    const Poly tau_s = galois(s, (std::uint64_t{1} << l) + 1, q);
    for (int j = 0; j < t; ++j) {
      std::uint64_t zj = 1;
      for (int k = 0; k < j; ++k)
        zj = static_cast<std::uint64_t>(static_cast<u128>(zj) << ring.params().gadget_log_base) % q;
      Poly scaled(tau_s.size());
      for (std::size_t i = 0; i < scaled.size(); ++i) {
        scaled[i] = static_cast<std::uint64_t>(static_cast<u128>(tau_s[i]) * zj % q);
      }
      KeyRow row;
      row.a = a[l - 1][j];
      row.b = sub(add(mul(s, row.a, q), e[l - 1][j], q), scaled, q);
      keys[l - 1].push_back(row);
    }
  }
  return keys;
}

Ciphertext automorph(const HintlessRing& ring, const Ciphertext& c, int level, const Keys& keys) {
  const std::uint64_t q = ring.q(), g = (std::uint64_t{1} << level) + 1;
  const int t = ring.params().gadget_digits, log_z = ring.params().gadget_log_base;
  const std::size_t d = ring.d();
  const Poly ta = galois(c.a, g, q);
  Ciphertext out{Poly(d, 0), galois(c.b, g, q)};
  // Balanced digits, written the slow way: centre, then take remainders in [-z/2, z/2).
  std::vector<Poly> digits(t, Poly(d));
  const std::int64_t z = std::int64_t{1} << log_z;
  for (std::size_t i = 0; i < d; ++i) {
    __int128 v = ta[i] > q / 2 ? static_cast<__int128>(ta[i]) - q : static_cast<__int128>(ta[i]);
    for (int j = 0; j < t; ++j) {
      __int128 r = v % z;
      if (r < 0) r += z;
      if (r >= z / 2) r -= z;
      digits[j][i] = static_cast<std::uint64_t>(r < 0 ? r + static_cast<__int128>(q) : r);
      v = (v - r) / z;
    }
  }
  for (int j = 0; j < t; ++j) {
    out.a = add(out.a, mul(digits[j], keys[level - 1][j].a, q), q);
    out.b = add(out.b, mul(digits[j], keys[level - 1][j].b, q), q);
  }
  return out;
}

namespace {

Ciphertext pack_rec(const HintlessRing& ring, const std::vector<Ciphertext>& in, int level,
                    const Keys& keys) {
  if (level == 0) return in[0];
  std::vector<Ciphertext> even, odd;
  for (std::size_t i = 0; i < in.size(); ++i) (i % 2 == 0 ? even : odd).push_back(in[i]);
  const Ciphertext ce = pack_rec(ring, even, level - 1, keys);
  const Ciphertext co = pack_rec(ring, odd, level - 1, keys);
  const std::uint64_t q = ring.q();
  const Poly w = monomial(ring.d(), ring.d() >> level);
  const Ciphertext wo{mul(w, co.a, q), mul(w, co.b, q)};
  const Ciphertext plus{add(ce.a, wo.a, q), add(ce.b, wo.b, q)};
  const Ciphertext minus{sub(ce.a, wo.a, q), sub(ce.b, wo.b, q)};
  const Ciphertext rotated = automorph(ring, minus, level, keys);
  return {add(plus.a, rotated.a, q), add(plus.b, rotated.b, q)};
}

}  // namespace

Ciphertext pack(const HintlessRing& ring, const std::vector<Ciphertext>& inputs, const Keys& keys) {
  return pack_rec(ring, inputs, ring.log_d(), keys);
}

}  // namespace privsearch::pir::hintless::reference
