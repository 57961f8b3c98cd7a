#include "pir/zippir/compress.h"

#include <cmath>
#include <string>

#include "pir/lwe/lwe.h"
#include "pir/paillier/bigint.h"
#include "pir/paillier/mont_batch.h"
#include "pir/paillier/multiexp.h"

namespace privsearch::pir {
namespace {

mpz_class pow2(std::size_t bits) {
  mpz_class v = 1;
  mpz_mul_2exp(v.get_mpz_t(), v.get_mpz_t(), static_cast<mp_bitcnt_t>(bits));
  return v;
}

mpz_class q_of(const LweScheme& s) { return pow2(static_cast<std::size_t>(s.log_q)); }

std::uint64_t round_to_plaintext(const LweScheme& s, std::uint64_t phase) {
  const int shift = s.log_q - s.log_p;
  const unsigned __int128 rounded = (static_cast<unsigned __int128>(phase) +
                                     (static_cast<unsigned __int128>(1) << (shift - 1))) >>
                                    shift;
  return static_cast<std::uint64_t>(rounded) & ((std::uint64_t{1} << s.log_p) - 1);
}

std::uint64_t low_bits(const mpz_class& x, int bits) {
  mpz_class r;
  mpz_fdiv_r_2exp(r.get_mpz_t(), x.get_mpz_t(), static_cast<mp_bitcnt_t>(bits));
  return static_cast<std::uint64_t>(mpz_get_ui(r.get_mpz_t()));
}

mpz_class multi_exp_any(const PaillierPublicKey& pk, std::span<const mpz_class> bases,
                        std::span<const mpz_class> exps, bool use_ifma) {
  if (use_ifma) {
    auto mb = MontgomeryBatch::create(pk.ciphertext_modulus());
    if (mb.ok() && mb->uses_ifma()) return multi_exp_batched(*mb, bases, exps);
  }
  return multi_exp(bases, exps, pk.ciphertext_modulus());
}

}  // namespace

Status LweScheme::validate() const {
  if (n == 0 || n > (1u << 16)) {
    return out_of_range_error("LWE `n` = " + std::to_string(n) + " is outside [1, 65536]");
  }
  if (log_q < 8 || log_q > 64 || log_p < 1 || log_p >= log_q) {
    return out_of_range_error("LWE needs 1 <= `log_p` < `log_q` <= 64");
  }
  return Status();
}

std::vector<std::uint64_t> lwe_keygen(const LweScheme& s, Prng& prng) {
  std::vector<std::uint64_t> sk(s.n);
  for (auto& v : sk) v = s.binary ? (prng.next_u64() & 1) : (prng.next_u64() & s.q_mask());
  return sk;
}

LweCiphertext lwe_encrypt(const LweScheme& s, std::span<const std::uint64_t> sk, std::uint64_t mu,
                          double sigma, Prng& prng) {
  GaussianSampler gauss(sigma);
  LweCiphertext ct;
  ct.a.resize(s.n);
  std::uint64_t dot = 0;
  for (std::size_t i = 0; i < s.n; ++i) {
    ct.a[i] = prng.next_u64() & s.q_mask();
    dot += ct.a[i] * sk[i];
  }
  const std::uint64_t e = static_cast<std::uint64_t>(static_cast<std::int64_t>(gauss.sample(prng)));
  const std::uint64_t delta_mu = mu << (s.log_q - s.log_p);
  ct.b = (dot + e + delta_mu) & s.q_mask();
  return ct;
}

std::uint64_t lwe_decrypt(const LweScheme& s, std::span<const std::uint64_t> sk,
                          const LweCiphertext& ct) {
  std::uint64_t dot = 0;
  for (std::size_t i = 0; i < s.n; ++i) dot += ct.a[i] * sk[i];
  return round_to_plaintext(s, (ct.b - dot) & s.q_mask());
}

mpz_class compression_scale(const LweScheme& s, CompressionScale scale) {
  const mpz_class q = q_of(s);
  if (scale == CompressionScale::kOverlap) return s.binary ? q : mpz_class(q * q);
  return s.binary ? mpz_class(q + static_cast<unsigned long>(s.n) * q)
                  : mpz_class(q + static_cast<unsigned long>(s.n) * q * q);
}

std::size_t ciphertexts_per_plaintext(const LweScheme& s, CompressionScale scale,
                                      std::size_t plaintext_bits) {
  const mpz_class gamma = compression_scale(s, scale);
  const double lg = std::log2(mpz_get_d(gamma.get_mpz_t()));
  double usable = static_cast<double>(plaintext_bits) - 1.0;
  if (scale == CompressionScale::kOverlap) usable -= std::log2(static_cast<double>(s.n) + 1.0);
  return usable <= 0 ? 0 : static_cast<std::size_t>(std::floor(usable / lg));
}

std::vector<mpz_class> make_compression_key(const PaillierPublicKey& pk,
                                            std::span<const std::uint64_t> sk, Prng& prng) {
  std::vector<mpz_class> ck(sk.size());
  for (std::size_t i = 0; i < sk.size(); ++i) {
    ck[i] = *pk.encrypt(mpz_class(static_cast<unsigned long>(sk[i])), prng);
  }
  return ck;
}

Result<mpz_class> compress_single(const PaillierPublicKey& pk, std::span<const mpz_class> ck,
                                  const LweScheme& s, const LweCiphertext& ct,
                                  const mpz_class& b_scale) {
  PRIVSEARCH_RETURN_IF_ERROR(s.validate());
  if (ct.a.size() != s.n || ck.size() != s.n) {
    return invalid_argument_error("compression: ciphertext or key of the wrong dimension");
  }
  if (compression_scale(s, CompressionScale::kExact) * b_scale >= pk.plaintext_modulus()) {
    return invalid_argument_error("compression: plaintext space below q + n q s_max");
  }
  const mpz_class q = q_of(s);
  std::vector<mpz_class> exps(s.n);
  for (std::size_t i = 0; i < s.n; ++i) {
    exps[i] = q - static_cast<unsigned long>(ct.a[i] & s.q_mask());
  }
  const mpz_class phase = multi_exp(ck, exps, pk.ciphertext_modulus());
  return pk.add_plain(phase, mpz_class(static_cast<unsigned long>(ct.b) * b_scale));
}

std::uint64_t decrypt_compressed_single(const PaillierPrivateKey& sk, const mpz_class& c,
                                        const LweScheme& s) {
  const mpz_class x = sk.decrypt_unchecked(c);
  return round_to_plaintext(s, low_bits(x, s.log_q));
}

PackedKeyLayout packed_key_layout(const LweScheme& s, const PaillierPublicKey& pk) {
  PackedKeyLayout layout;
  const mpz_class gamma = compression_scale(s, CompressionScale::kExact);
  const std::size_t dbits = mpz_sizeinbase(gamma.get_mpz_t(), 2);  // delta = 2^dbits > gamma
  layout.delta = pow2(dbits);
  const std::size_t mbits = pk.modulus_bits() * static_cast<std::size_t>(pk.degree()) - 1;
  // delta^{2t-1} < m.
  layout.digits_per_ciphertext = std::max<std::size_t>(1, (mbits / dbits + 1) / 2);
  layout.ciphertexts = (s.n + layout.digits_per_ciphertext - 1) / layout.digits_per_ciphertext;
  return layout;
}

std::vector<mpz_class> make_packed_compression_key(const PaillierPublicKey& pk,
                                                   std::span<const std::uint64_t> sk,
                                                   const PackedKeyLayout& layout, Prng& prng) {
  std::vector<mpz_class> out(layout.ciphertexts);
  const std::size_t t = layout.digits_per_ciphertext;
  for (std::size_t k = 0; k < layout.ciphertexts; ++k) {
    mpz_class m = 0;
    for (std::size_t i = std::min(sk.size(), (k + 1) * t); i-- > k * t;) {
      m = m * layout.delta + static_cast<unsigned long>(sk[i]);
    }
    out[k] = *pk.encrypt(m, prng);
  }
  return out;
}

std::vector<mpz_class> unpack_compression_key(const PaillierPublicKey& pk,
                                              std::span<const mpz_class> packed,
                                              const PackedKeyLayout& layout, std::size_t n) {
  // Within a block, digit j needs pck^{delta^{t-1-j}}: walk j downwards from t - 1, raising the
  // previous power to delta each step (a ~43-bit exponent) instead of one ~1500-bit power each.
  const std::size_t t = layout.digits_per_ciphertext;
  std::vector<mpz_class> ck(n);
  for (std::size_t k = 0; k * t < n; ++k) {
    mpz_class cur = packed[k];
    for (std::size_t j = t; j-- > 0;) {
      if (j != t - 1) cur = pk.scalar_mul(cur, layout.delta);
      if (k * t + j < n) ck[k * t + j] = cur;
    }
  }
  return ck;
}

std::uint64_t decrypt_compressed_packed(const PaillierPrivateKey& sk, const mpz_class& c,
                                        const LweScheme& s, const PackedKeyLayout& layout) {
  mpz_class x = sk.decrypt_unchecked(c);
  mpz_class scale = 1;
  for (std::size_t k = 1; k < layout.digits_per_ciphertext; ++k) scale *= layout.delta;
  x /= scale;
  x %= layout.delta;
  return round_to_plaintext(s, low_bits(x, s.log_q));
}

Result<mpz_class> compress_batch(const PaillierPublicKey& pk, std::span<const mpz_class> ck,
                                 const LweScheme& s, std::span<const LweCiphertext> cts,
                                 CompressionScale scale, bool use_ifma) {
  PRIVSEARCH_RETURN_IF_ERROR(s.validate());
  const std::size_t capacity = ciphertexts_per_plaintext(
      s, scale, pk.modulus_bits() * static_cast<std::size_t>(pk.degree()));
  if (cts.empty() || cts.size() > capacity) {
    return out_of_range_error("batched compression of " + std::to_string(cts.size()) +
                              " ciphertexts; one additive ciphertext holds 1 .. " +
                              std::to_string(capacity));
  }
  if (ck.size() != s.n) return invalid_argument_error("compression key of the wrong dimension");
  const mpz_class q = q_of(s);
  const mpz_class gamma = compression_scale(s, scale);
  std::vector<mpz_class> exps(s.n, 0);
  mpz_class b = 0;
  // Horner from the last ciphertext: E_i = sum_j (q - a_ji) gamma^j.
  for (std::size_t j = cts.size(); j-- > 0;) {
    if (cts[j].a.size() != s.n) return invalid_argument_error("LWE ciphertext of the wrong n");
    b = b * gamma + static_cast<unsigned long>(cts[j].b & s.q_mask());
    for (std::size_t i = 0; i < s.n; ++i) {
      exps[i] = exps[i] * gamma + (q - static_cast<unsigned long>(cts[j].a[i] & s.q_mask()));
    }
  }
  const mpz_class phase = multi_exp_any(pk, ck, exps, use_ifma);
  return pk.add_plain(phase, b);
}

std::vector<std::uint64_t> decrypt_compressed_batch(const PaillierPrivateKey& sk,
                                                    const mpz_class& c, const LweScheme& s,
                                                    std::size_t count, CompressionScale scale) {
  const mpz_class x = sk.decrypt_unchecked(c);
  const mpz_class gamma = compression_scale(s, scale);
  std::vector<std::uint64_t> out(count);
  mpz_class rest = x;
  for (std::size_t j = 0; j < count; ++j) {
    // Slot j: floor(X / gamma^j); exact slots are reduced mod gamma first, overlapping ones
    // carry at most n + 1 from below, which the rounding absorbs.
    mpz_class slot = rest;
    if (scale == CompressionScale::kExact) slot %= gamma;
    out[j] = round_to_plaintext(s, low_bits(slot, s.log_q));
    rest /= gamma;
  }
  return out;
}

LweCiphertext rescale_lwe(const LweScheme& s, const LweCiphertext& ct, int new_log_q) {
  const int shift = s.log_q - new_log_q;
  const std::uint64_t mask = (std::uint64_t{1} << new_log_q) - 1;
  auto sw = [&](std::uint64_t x) {
    const unsigned __int128 v = (static_cast<unsigned __int128>(x & s.q_mask()) +
                                 (static_cast<unsigned __int128>(1) << (shift - 1))) >>
                                shift;
    return static_cast<std::uint64_t>(v) & mask;
  };
  LweCiphertext out;
  out.a.resize(ct.a.size());
  for (std::size_t i = 0; i < ct.a.size(); ++i) out.a[i] = sw(ct.a[i]);
  out.b = sw(ct.b);
  return out;
}

LweCiphertext lwe_from_rlwe_coefficient(std::span<const std::uint64_t> c0,
                                        std::span<const std::uint64_t> c1, std::size_t k,
                                        std::uint64_t q_mask) {
  const std::size_t n = c1.size();
  LweCiphertext ct;
  ct.a.resize(n);
  ct.b = c0[k] & q_mask;
  for (std::size_t i = 0; i < n; ++i) {
    ct.a[i] = i <= k ? (std::uint64_t{0} - c1[k - i]) & q_mask : c1[n + k - i] & q_mask;
  }
  return ct;
}

}  // namespace privsearch::pir
