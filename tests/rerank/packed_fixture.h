// Shared by the packed kernel's tests: slow references of the ring operations the kernel uses
// (schoolbook products, automorphisms from the definition, the CDKS tree on plaintexts) and a
// kit that scores one problem end to end (encrypt, kernel, compaction, decode).
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "ckks/client/decryptor.h"
#include "ckks/client/keygen.h"
#include "ckks/param_sets.h"
#include "rerank/client/packed_scores.h"
#include "rerank/client/scores.h"
#include "rerank/kernels.h"
#include "rerank/packed.h"
#include "rerank/packed_response.h"
#include "testing/test_util.h"

namespace privsearch::rerank::testing_packed {

using Poly = std::vector<std::uint64_t>;  // coefficient form mod q

inline ckks::ParamsLiteral small_packed_literal(std::size_t n) {
  auto l = ckks::packed_n4096_literal();
  l.name = "insecure-test-packed";
  l.n = n;
  l.insecure_for_tests = true;
  return l;
}

// --- slow references -------------------------------------------------------------------------

// a * b in Z_q[X]/(X^n + 1), schoolbook.
inline Poly negacyclic_product(const Poly& a, const Poly& b, const ring::Modulus& q) {
  const std::size_t n = a.size();
  Poly out(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      const std::uint64_t p = q.mul(a[i], b[j]);
      const std::size_t e = i + j;
      out[e % n] = e < n ? q.add(out[e % n], p) : q.sub(out[e % n], p);
    }
  }
  return out;
}

// sigma_g on coefficients, from the definition X^j -> X^(j g mod 2n), X^n = -1.
inline Poly automorphism(const Poly& a, std::uint64_t g, const ring::Modulus& q) {
  const std::size_t n = a.size();
  Poly out(n, 0);
  for (std::size_t j = 0; j < n; ++j) {
    const std::size_t e = (j * g) % (2 * n);
    out[e % n] = e < n ? q.add(out[e % n], a[j]) : q.sub(out[e % n], a[j]);
  }
  return out;
}

inline Poly shift(const Poly& a, std::size_t t, const ring::Modulus& q) {
  Poly m(a.size(), 0);
  m[t] = 1;
  return negacyclic_product(a, m, q);
}

inline Poly add(Poly a, const Poly& b, const ring::Modulus& q) {
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = q.add(a[i], b[i]);
  return a;
}
inline Poly sub(Poly a, const Poly& b, const ring::Modulus& q) {
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = q.sub(a[i], b[i]);
  return a;
}

// The CDKS tree and trace tail of packed.h, written out on plaintext polynomials.
inline Poly reference_pack(const std::vector<Poly>& leaves, std::size_t levels, std::size_t r,
                           std::size_t block, const ring::Modulus& q) {
  const std::size_t n = leaves[0].size();
  const int first = std::countr_zero(2 * r);
  std::vector<Poly> nodes = leaves;  // level 0, indexed by leaf
  nodes.resize(std::size_t{1} << levels, Poly(n, 0));
  // Level h merges leaf classes i and i + 2^(levels-h) (the stride of packed.h's recursion).
  for (std::size_t h = 1; h <= levels; ++h) {
    const std::size_t half = nodes.size() / 2;
    std::vector<Poly> next(half);
    const std::uint64_t g = (std::uint64_t{1} << (first + h - 1)) + 1;
    for (std::size_t i = 0; i < half; ++i) {
      const Poly w_odd = shift(nodes[i + half], block >> h, q);
      next[i] = add(add(nodes[i], w_odd, q), automorphism(sub(nodes[i], w_odd, q), g, q), q);
    }
    nodes = std::move(next);
  }
  Poly out = nodes[0];
  for (int j = first + static_cast<int>(levels); (std::size_t{1} << j) <= n; ++j) {
    out = add(out, automorphism(out, (std::uint64_t{1} << j) + 1, q), q);
  }
  return out;
}

inline std::int64_t centred(std::uint64_t x, std::uint64_t q) {
  return x > q / 2 ? static_cast<std::int64_t>(x) - static_cast<std::int64_t>(q)
                   : static_cast<std::int64_t>(x);
}

struct Kit {
  explicit Kit(const ckks::Params& p)
      : params(p),
        prng(testing::test_prng(4242)),
        keygen(p),
        sk(keygen.create_secret_key(prng)),
        evaluator(p) {}
  ckks::Params params;
  Prng prng;
  ckks::KeyGenerator keygen;
  ckks::SecretKey sk;
  ckks::Evaluator evaluator;
  const ring::Modulus& q() const { return params.q_moduli()[0]; }
};

inline std::vector<double> unit_vector(std::size_t d, Prng& prng) {
  return ::privsearch::testing::random_unit_vector(prng, d);
}

// k random unit rows of dimension d, row-major float32 as the exact store holds them.
inline std::vector<float> unit_rows(std::size_t k, std::size_t d, Prng& prng) {
  std::vector<float> rows;
  for (std::size_t c = 0; c < k; ++c) {
    for (const double v : unit_vector(d, prng)) rows.push_back(static_cast<float>(v));
  }
  return rows;
}

struct Scored {
  std::vector<double> scores, expected;
  std::size_t response_bytes = 0, key_switches = 0;
};

inline Scored score(Kit& kit, std::size_t d, const std::vector<double>& query,
                    const std::vector<float>& rows, double precision_bits = 18) {
  const std::size_t k = rows.size() / d;
  const auto layout = *make_layout(kit.params, Kernel::kPacked, d, k);
  const auto keys = *make_rotation_keys(layout, kit.keygen, kit.sk, kit.prng);
  const auto ct = *encrypt_packed_query(layout, kit.params, kit.sk, query, kit.prng);
  auto result = evaluate_packed_kernel(layout, kit.evaluator, keys, ct, rows, 2);
  Scored s;
  if (!result.ok()) {
    ADD_FAILURE() << result.status().to_string();
    return s;
  }
  s.key_switches = result->key_switches;
  std::vector<PackedCiphertext> outputs;
  for (std::size_t w = 0; w < result->outputs.size(); ++w) {
    const auto positions = packed_positions(layout, w);
    auto packed = compact_packed(kit.params, result->outputs[w], positions, {1.0, precision_bits});
    EXPECT_TRUE(packed.ok()) << packed.status().to_string();
    const auto bytes = serialize_packed(*packed);
    s.response_bytes += bytes.size();
    outputs.push_back(*deserialize_packed(kit.params, bytes, positions.size()));
  }
  s.scores = *decrypt_packed_scores(layout, kit.params, kit.sk, outputs);
  for (std::size_t c = 0; c < k; ++c) {
    double dot = 0;
    for (std::size_t a = 0; a < d; ++a) dot += query[a] * static_cast<double>(rows[c * d + a]);
    s.expected.push_back(dot);
  }
  return s;
}

inline double max_error(const Scored& s) {
  double e = 0;
  for (std::size_t c = 0; c < s.scores.size(); ++c) {
    e = std::fmax(e, std::fabs(s.scores[c] - s.expected[c]));
  }
  return s.scores.empty() ? std::nan("") : e;
}

}  // namespace privsearch::rerank::testing_packed
