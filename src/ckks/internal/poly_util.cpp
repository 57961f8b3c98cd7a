#include "ckks/internal/poly_util.h"

#include <algorithm>
#include <array>

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

void ModDownScratch::resize(const Params& params) {
  const std::size_t n = params.n();
  p_rows.resize(params.num_p() * n);
  if (params.num_p() > 1) conv.resize((params.num_p() + 1) * n);
  transform.resize(n);
}

void mod_down_prepare(const Params& params, ModDownScratch& s) {
  const std::size_t n = params.n();
  const std::size_t np = params.num_p();
  PRIVSEARCH_CHECK(s.p_rows.size() == np * n && s.transform.size() == n,
                   "mod_down scratch not sized for these parameters");
  for (std::size_t j = 0; j < np; ++j)
    params.ntt(params.num_q() + j).inverse(s.p_rows.data() + j * n);
  if (np > 1) {
    // Several special primes: the rows every target of the exact centred conversion shares
    // (ring/rns.h); each target's sum is formed inside its transform (mod_down_row).
    PRIVSEARCH_CHECK(s.conv.size() == (np + 1) * n, "mod_down scratch too small");
    params.p_to_q().prepare_centered(s.p_rows.data(), s.conv.data(), s.conv.data() + np * n, n);
  }
}

void mod_down_row(const Params& params, ModDownScratch& s, std::size_t i, const std::uint64_t* x,
                  bool x_scaled, std::uint64_t* out, const std::uint64_t* addend,
                  const ring::GaloisPermutation* perm) {
  const std::size_t np = params.num_p();
  const ring::ModDownRow::Target target{x, params.p_inv_mod_q(i), out, x_scaled};
  std::array<std::uint64_t, ring::ModDownRow::kMaxConvSources> c{};
  auto row = [&] {
    if (np == 1) {  // one special prime: the centred lift happens inside the transform
      return ring::ModDownRow::lift(s.p_rows.data(), params.key_moduli()[params.num_q()].value(),
                                    target);
    }
    PRIVSEARCH_CHECK(np <= c.size(), "too many special primes for the fused ModDown");
    const ring::BaseConverter& converter = params.p_to_q();
    ring::ModDownRow::Conversion conv;
    for (std::size_t k = 0; k < np; ++k) {
      c[k] = converter.punctured_mod_to(i, k);
      conv.max_source = std::max(conv.max_source, converter.from()[k].value());
    }
    conv.t = s.conv.data();
    conv.u = s.conv.data() + np * params.n();
    conv.sources = np;
    conv.c = c.data();
    conv.m = converter.modulus_mod_to(i);
    return ring::ModDownRow::conversion(conv, target);
  }();
  row.with_addend(addend, perm);
  params.ntt(i).forward_mod_down(row, s.transform.data());
}

void mod_down_inplace(const Params& params, std::size_t level, ring::RnsPoly& poly,
                      bool q_rows_scaled) {
  const std::size_t n = params.n();
  const std::size_t nq = level + 1;
  const std::size_t np = params.num_p();
  PRIVSEARCH_CHECK(poly.is_ntt() && poly.num_moduli() == nq + np, "mod_down shape mismatch");
  // Scratch reused across calls on this thread.
  thread_local ModDownScratch s;
  s.resize(params);
  for (std::size_t j = 0; j < np; ++j) std::copy_n(poly.row(nq + j), n, s.p_rows.data() + j * n);
  mod_down_prepare(params, s);
  for (std::size_t i = 0; i < nq; ++i) {
    mod_down_row(params, s, i, poly.row(i), q_rows_scaled, poly.row(i), nullptr, nullptr);
  }
  poly.truncate_moduli(nq);
}

}  // namespace privsearch::ckks
