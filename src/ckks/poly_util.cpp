#include "ckks/poly_util.h"

#include <algorithm>

#include "core/check.h"
#include "ring/sampler.h"
#include "ring/shoup_kernels.h"

namespace privsearch::ckks {

std::vector<std::size_t> key_rows(const Params& params, std::size_t level, bool with_p) {
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i <= level; ++i) rows.push_back(i);
  if (with_p) {
    for (std::size_t j = 0; j < params.num_p(); ++j) rows.push_back(params.num_q() + j);
  }
  return rows;
}

std::vector<ring::Modulus> moduli_for_rows(const Params& params,
                                           const std::vector<std::size_t>& rows) {
  std::vector<ring::Modulus> out;
  out.reserve(rows.size());
  for (std::size_t r : rows) out.push_back(params.key_moduli()[r]);
  return out;
}

void to_ntt(const Params& params, const std::vector<std::size_t>& rows, ring::RnsPoly& poly) {
  PRIVSEARCH_CHECK(!poly.is_ntt() && poly.num_moduli() == rows.size(), "to_ntt shape mismatch");
  for (std::size_t i = 0; i < rows.size(); ++i) params.ntt(rows[i]).forward(poly.row(i));
  poly.set_ntt(true);
}

void from_ntt(const Params& params, const std::vector<std::size_t>& rows, ring::RnsPoly& poly) {
  PRIVSEARCH_CHECK(poly.is_ntt() && poly.num_moduli() == rows.size(), "from_ntt shape mismatch");
  for (std::size_t i = 0; i < rows.size(); ++i) params.ntt(rows[i]).inverse(poly.row(i));
  poly.set_ntt(false);
}

ring::RnsPoly expand_uniform(const Params& params, const std::vector<std::size_t>& rows,
                             const Seed& seed, std::uint64_t stream) {
  Prng prng = Prng::from_seed(seed, stream);
  ring::RnsPoly out(params.n(), rows.size(), true);
  const auto moduli = moduli_for_rows(params, rows);
  ring::sample_uniform_rows(prng, moduli, out);
  return out;
}

void mod_down_inplace(const Params& params, std::size_t level, ring::RnsPoly& poly) {
  const std::size_t n = params.n();
  const std::size_t nq = level + 1;
  const std::size_t np = params.num_p();
  PRIVSEARCH_CHECK(poly.is_ntt() && poly.num_moduli() == nq + np, "mod_down shape mismatch");
  // Scratch reused across calls on this thread: ModDown runs once or twice per rotation.
  thread_local std::vector<std::uint64_t> xp, conv;
  xp.resize(np * n);
  conv.resize(nq * n);
  // [x]_P centred, in coefficient form, converted exactly to q_0..q_level; then
  // (x - [x]_P) / P = round(x / P).
  for (std::size_t j = 0; j < np; ++j) {
    std::uint64_t* row = xp.data() + j * n;
    std::copy_n(poly.row(nq + j), n, row);
    params.ntt(params.num_q() + j).inverse(row);
  }
  thread_local std::vector<std::size_t> targets;
  targets.resize(nq);
  for (std::size_t i = 0; i < nq; ++i) targets[i] = i;
  params.p_to_q().convert_centered(xp.data(), conv.data(), n, targets);
  for (std::size_t i = 0; i < nq; ++i) {
    const ring::Modulus& qi = params.key_moduli()[i];
    std::uint64_t* c = conv.data() + i * n;
    params.ntt(i).forward(c);
    ring::sub_add_mul_scalar_row(poly.row(i), c, qi.value(), params.p_inv_mod_q(i), poly.row(i),
                                 n, qi);
  }
  poly.truncate_moduli(nq);
}

}  // namespace privsearch::ckks
