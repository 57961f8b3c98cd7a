#include "rerank/client/packed_scores.h"

#include <fmt/format.h>

#include <cmath>

#include "ckks/client/encryptor.h"
#include "core/secure_buffer.h"

namespace privsearch::rerank {

namespace {

// x in [0, 2^bits) as the signed value in [-2^(bits-1), 2^(bits-1)), branch-free.
std::int64_t centre_pow2(std::uint64_t x, int bits) {
  const std::uint64_t half = std::uint64_t{1} << (bits - 1);
  return static_cast<std::int64_t>(x) - static_cast<std::int64_t>((x & half) << 1);
}

// x in [0, q) as the signed value in (-q/2, q/2], branch-free.
std::int64_t centre_mod(std::uint64_t x, std::uint64_t q) {
  const std::uint64_t above = static_cast<std::uint64_t>(x > q / 2);  // setcc, no branch
  return static_cast<std::int64_t>(x) - static_cast<std::int64_t>(above * q);
}

// Buffers of secret-dependent values, wiped however the function returns.
struct Wiped {
  std::vector<std::uint64_t> t;
  std::vector<double> phases;
  Wiped() = default;
  Wiped(const Wiped&) = delete;
  Wiped& operator=(const Wiped&) = delete;
  ~Wiped() {
    secure_zero(t.data(), t.size() * sizeof(std::uint64_t));
    secure_zero(phases.data(), phases.size() * sizeof(double));
  }
};

Status check_output(const ckks::Params& params, const PackedCiphertext& ct, std::size_t count) {
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params, ct.params_id, "packed response"));
  const int max_b1 = static_cast<int>(params.q_moduli()[0].bit_count()) - params.log_n() - 2;
  if (ct.c0.size() != count || ct.c1.size() != params.n() || ct.c0_bits < 1 || ct.c0_bits > 62 ||
      ct.c1_bits < 1 || ct.c1_bits > max_b1 || !(ct.scale > 0)) {
    return invalid_argument_error("packed response does not match the layout or the params");
  }
  return Status();
}

// The scores of one output into `scores` at its candidates' places.
Status decrypt_output(const KernelLayout& layout, const ckks::Params& params,
                      const ckks::SecretKey& sk, const PackedCiphertext& ct, std::size_t output,
                      std::vector<double>& scores) {
  const auto positions = packed_positions(layout, output);
  PRIVSEARCH_RETURN_IF_ERROR(check_output(params, ct, positions.size()));
  const ring::Modulus& q = params.q_moduli()[0];
  const std::size_t n = params.n();
  Wiped w;
  w.t.resize(n);
  for (std::size_t j = 0; j < n; ++j) w.t[j] = q.from_signed(centre_pow2(ct.c1[j], ct.c1_bits));
  params.ntt(0).forward(w.t.data());
  const std::uint64_t* s = sk.row(0);
  for (std::size_t j = 0; j < n; ++j) w.t[j] = q.mul(w.t[j], s[j]);
  params.ntt(0).inverse(w.t.data());
  const int k = ct.log_modulus();
  const std::uint64_t mask = k == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << k) - 1;
  w.phases.resize(positions.size());
  for (std::size_t i = 0; i < positions.size(); ++i) {
    const auto t = static_cast<std::uint64_t>(centre_mod(w.t[positions[i]], q.value()));
    const std::uint64_t phase = ((ct.c0[i] << (k - ct.c0_bits)) + (t << (k - ct.c1_bits))) & mask;
    w.phases[i] = static_cast<double>(centre_pow2(phase, k)) / ct.scale;
  }
  const std::size_t first = output * layout.capacity();
  for (std::size_t i = 0; i < positions.size(); ++i) scores[first + i] = w.phases[i];
  return Status();
}

}  // namespace

Result<ckks::Ciphertext> encrypt_packed_query(const KernelLayout& layout,
                                              const ckks::Params& params, const ckks::SecretKey& sk,
                                              std::span<const double> z, Prng& prng) {
  if (layout.kernel() != Kernel::kPacked) {
    return invalid_argument_error("encrypt_packed_query needs a packed layout");
  }
  if (z.size() != layout.dim()) {
    return invalid_argument_error(
        fmt::format("query has {} values, the layout expects d' = {}", z.size(), layout.dim()));
  }
  for (std::size_t a = 0; a < z.size(); ++a) {
    if (!std::isfinite(z[a]) || std::abs(z[a]) > 1.0) {
      return invalid_argument_error(fmt::format("query value {} is not finite or above 1", a));
    }
  }
  const ring::Modulus& q = params.q_moduli()[0];
  const std::size_t n = params.n();
  ring::RnsPoly poly(n, 1, false);
  std::uint64_t* c = poly.row(0);
  const double delta = params.default_scale();
  for (std::size_t a = 0; a < z.size(); ++a) {
    const auto v = static_cast<std::int64_t>(std::llround(delta * z[a]));
    c[a == 0 ? 0 : n - a] = q.from_signed(a == 0 ? v : -v);  // X^-a = -X^(n-a)
  }
  params.ntt(0).forward(c);
  poly.set_ntt(true);
  ckks::Plaintext pt(params.id(), 0, delta, std::move(poly));
  auto ct = ckks::Encryptor(params).encrypt_symmetric(sk, pt, prng);
  const auto wipe = pt.mutable_poly().data();  // the encoded query
  secure_zero(wipe.data(), wipe.size_bytes());
  return ct;
}

Result<std::vector<double>> decrypt_packed_scores(const KernelLayout& layout,
                                                  const ckks::Params& params,
                                                  const ckks::SecretKey& sk,
                                                  std::span<const PackedCiphertext> outputs) {
  if (layout.kernel() != Kernel::kPacked || outputs.size() != layout.outputs()) {
    return invalid_argument_error(fmt::format("{} packed response ciphertexts, the layout has {}",
                                              outputs.size(), layout.outputs()));
  }
  std::vector<double> scores(layout.k());
  for (std::size_t w = 0; w < outputs.size(); ++w) {
    PRIVSEARCH_RETURN_IF_ERROR(decrypt_output(layout, params, sk, outputs[w], w, scores));
  }
  return scores;
}

}  // namespace privsearch::rerank
