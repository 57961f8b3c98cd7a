#include "ckks/client/compact_decryptor.h"

#include <fmt/format.h>

#include "core/secure_buffer.h"

namespace privsearch::ckks {

Result<std::vector<double>> CompactDecryptor::decrypt_coefficients(
    const SecretKey& sk, const CompactCiphertext& ct) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params_, sk.params_id(), "secret key"));
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params_, ct.params_id(), "compact ciphertext"));
  const std::size_t n = params_.n();
  const auto& l = ct.layout();
  if (ct.c0().size() != n || ct.c1().size() != n) {
    return failed_precondition_error("compact ciphertext does not have n coefficients");
  }
  // c1'' * s exactly: |c1'' * s|_inf <= n * 2^b1, so one key-basis prime m with
  // n * 2^(b1 + 1) < m suffices (centred residue); otherwise q_0 and p_0 with a CRT.
  const int k = l.log_modulus;
  const double need = std::log2(static_cast<double>(params_.n())) + l.c1_bits + 1;
  std::size_t single = params_.key_moduli().size();
  for (std::size_t i = 0; i < params_.key_moduli().size(); ++i) {
    if (need < std::log2(static_cast<double>(params_.key_moduli()[i].value())) - 0.5) single = i;
  }
  const bool one_prime = single < params_.key_moduli().size();
  const ring::Modulus& q0 = params_.key_moduli()[one_prime ? single : 0];
  const std::size_t idx[2] = {one_prime ? single : 0, params_.num_q()};
  // c1 * s is secret-dependent: held in wiped buffers (docs/SECURITY.md, zeroization).
  SecureVector<std::uint64_t> res[2];
  for (int r = 0; r < (one_prime ? 1 : 2); ++r) {
    const ring::Modulus& m = params_.key_moduli()[idx[r]];
    res[r].assign_zero(n);
    for (std::size_t t = 0; t < n; ++t) res[r][t] = m.reduce(ct.c1()[t]);
    params_.ntt(idx[r]).forward(res[r].data());
    const std::uint64_t* s = sk.row(idx[r]);
    for (std::size_t t = 0; t < n; ++t) res[r][t] = m.mul(res[r][t], s[t]);
    params_.ntt(idx[r]).inverse(res[r].data());
  }
  using u128 = unsigned __int128;
  std::vector<double> out(n);
  if (one_prime) {
    const std::uint64_t qv = q0.value(), half_q = qv >> 1;
    const std::uint64_t mask_k = (k == 64) ? ~std::uint64_t{0} : (std::uint64_t{1} << k) - 1;
    for (std::size_t t = 0; t < n; ++t) {
      const std::uint64_t x = res[0][t];
      // centred residue (branch-free), as a two's-complement 64-bit value
      const std::uint64_t neg = (half_q - x) >> 63;
      const std::uint64_t centred = x - (qv & (std::uint64_t{0} - neg));
      const std::uint64_t prod = (centred << (k - l.c1_bits)) & mask_k;
      const std::uint64_t v = ((ct.c0()[t] << (k - l.c0_bits)) + prod) & mask_k;
      const std::uint64_t top = (v >> (k - 1)) & 1;
      out[t] =
          static_cast<double>(static_cast<std::int64_t>(v) -
                              static_cast<std::int64_t>((std::uint64_t{1} << (k - 1)) * 2 * top));
    }
    return out;
  }
  const ring::Modulus& m0 = params_.key_moduli()[idx[0]];
  const ring::Modulus& m1 = params_.key_moduli()[idx[1]];
  const std::uint64_t m0_inv_mod_m1 = m1.inv(m1.reduce(m0.value()));
  const std::uint64_t m0_inv_shoup = m1.shoup(m0_inv_mod_m1);
  const u128 big_m = static_cast<u128>(m0.value()) * m1.value();
  const u128 half_m = big_m >> 1;
  const u128 mask_k = (static_cast<u128>(1) << k) - 1;
  for (std::size_t t = 0; t < n; ++t) {
    // Garner: x = r0 + m0 * ((r1 - r0) * m0^-1 mod m1), in [0, M).
    const std::uint64_t r0 = res[0][t], r1 = res[1][t];
    const std::uint64_t d =
        m1.mul_shoup(r1 + m1.value() - m1.reduce(r0), m0_inv_mod_m1, m0_inv_shoup);
    const u128 x = static_cast<u128>(r0) + static_cast<u128>(m0.value()) * d;
    // Centre branch-free: x > M/2 stands for x - M; modulo 2^k that is x + (2^128 - M).
    const u128 negative = static_cast<u128>(0) - static_cast<u128>(x > half_m);
    const u128 centred = x - (big_m & negative);  // two's complement of the signed value
    const u128 prod = (centred << (k - l.c1_bits)) & mask_k;
    const u128 total = ((static_cast<u128>(ct.c0()[t]) << (k - l.c0_bits)) + prod) & mask_k;
    // Centre modulo 2^k: values >= 2^(k-1) are negative.
    const std::uint64_t v = static_cast<std::uint64_t>(total);
    const std::uint64_t top = (v >> (k - 1)) & 1;
    const std::int64_t signed_v =
        static_cast<std::int64_t>(v) -
        static_cast<std::int64_t>((std::uint64_t{1} << (k - 1)) * 2 * top);
    out[t] = static_cast<double>(signed_v);
  }
  return out;
}

Result<std::vector<double>> CompactDecryptor::decrypt_decode(const SecretKey& sk,
                                                             const Encoder& encoder,
                                                             const CompactCiphertext& ct) const {
  PRIVSEARCH_ASSIGN_OR_RETURN(auto coeffs, decrypt_coefficients(sk, ct));
  auto slots = encoder.decode_coefficients(coeffs, ct.scale());
  secure_zero(coeffs.data(), coeffs.size() * sizeof(double));  // the decrypted message
  PRIVSEARCH_RETURN_IF_ERROR(slots.status());
  std::vector<double> out(slots->size());
  for (std::size_t j = 0; j < slots->size(); ++j) out[j] = (*slots)[j].real();
  secure_zero(slots->data(), slots->size() * sizeof((*slots)[0]));
  return out;
}

}  // namespace privsearch::ckks
