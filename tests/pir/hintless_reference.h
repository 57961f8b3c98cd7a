// Slow reference code for the hintless backend's known-answer tests: schoolbook negacyclic
// products and coefficient-form automorphisms mod the full q (128-bit arithmetic), and CDKS
// packing written from Construction 2.8 as it reads, on full ciphertexts. Nothing here shares
// code with src/pir/hintless except the parameters.
#pragma once

#include <cstdint>
#include <vector>

#include "pir/hintless/ring_context.h"

namespace privsearch::pir::hintless::reference {

using Poly = std::vector<std::uint64_t>;  // d coefficients mod q

Poly mul(const Poly& a, const Poly& b, std::uint64_t q);
Poly add(const Poly& a, const Poly& b, std::uint64_t q);
Poly sub(const Poly& a, const Poly& b, std::uint64_t q);
Poly galois(const Poly& a, std::uint64_t g, std::uint64_t q);
Poly monomial(std::size_t d, std::size_t k);
Poly from_signed(const std::vector<std::int64_t>& v, std::uint64_t q);
// A Poly2 (NTT form) of the fast code as coefficients mod q.
Poly from_poly2_ntt(const HintlessRing& ring, const std::uint64_t* poly2);
// Coefficients mod q into a Poly2 in NTT form.
std::vector<std::uint64_t> to_poly2_ntt(const HintlessRing& ring, const Poly& p);

struct Ciphertext {
  Poly a, b;
};
struct KeyRow {
  Poly a, b;
};
// keys[l - 1][j] for tau_{2^l + 1}, digit j.
using Keys = std::vector<std::vector<KeyRow>>;

// b = s a + e - tau_g(s) z^j for the given a-rows.
Keys make_keys(const HintlessRing& ring, const Poly& s, const std::vector<std::vector<Poly>>& a,
               const std::vector<std::vector<Poly>>& e);
Ciphertext automorph(const HintlessRing& ring, const Ciphertext& c, int level, const Keys& keys);
// CDKS PackLWEs over inputs[0 .. d) (already embedded RLWE ciphertexts).
Ciphertext pack(const HintlessRing& ring, const std::vector<Ciphertext>& inputs, const Keys& keys);

}  // namespace privsearch::pir::hintless::reference
