#include "pir/paillier/paillier_private.h"

#include <cstring>
#include <string>

#include "core/bytes.h"
#include "core/linkage.h"
#include "core/secure_buffer.h"
#include "pir/paillier/bigint.h"

namespace privsearch::pir {
namespace {

constexpr std::uint8_t kPrivateMagic[4] = {'P', 'S', 'S', 'K'};
constexpr std::uint8_t kVersion = 1;

Status read_private_magic(ByteReader& r) {
  std::uint8_t got[4];
  PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(got));
  if (std::memcmp(got, kPrivateMagic, 4) != 0) {
    return data_loss_error("Paillier private key: bad magic");
  }
  std::uint8_t version = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u8(version));
  if (version != kVersion) {
    return failed_precondition_error(
        "Paillier private key: `version` = " + std::to_string(version) + ", this build reads 1");
  }
  return Status();
}

mpz_class random_prime(int bits, Prng& prng) {
  for (;;) {
    mpz_class c = random_bits(static_cast<std::size_t>(bits), prng);
    mpz_setbit(c.get_mpz_t(), static_cast<mp_bitcnt_t>(bits - 1));
    mpz_setbit(c.get_mpz_t(), static_cast<mp_bitcnt_t>(bits - 2));
    mpz_setbit(c.get_mpz_t(), 0);
    // Baillie-PSW plus 25 Miller-Rabin rounds (GMP 6.2), error far below 2^-100 for random input.
    if (mpz_probab_prime_p(c.get_mpz_t(), 50) != 0) return c;
  }
}

}  // namespace

// --- private key --------------------------------------------------------------------------

PaillierPrivateKey::~PaillierPrivateKey() { wipe(); }

void PaillierPrivateKey::wipe() {
  // Blocks are wiped on free by the wiping allocator; setting to 0 first also clears the
  // in-place limbs of keys that stay alive.
  for (mpz_class* v : {&p_, &q_, &p2_, &q2_, &hp_, &hq_, &p_inv_q_, &lambda_, &lambda_inv_}) {
    const std::size_t limbs = mpz_size(v->get_mpz_t());
    if (limbs > 0) {
      volatile mp_limb_t* d = mpz_limbs_modify(v->get_mpz_t(), static_cast<mp_size_t>(limbs));
      for (std::size_t i = 0; i < limbs; ++i) d[i] = 0;
      mpz_limbs_finish(v->get_mpz_t(), 0);
    }
  }
}

Result<PaillierPrivateKey> PaillierPrivateKey::from_primes(const PaillierPublicKey& pub,
                                                           const mpz_class& p, const mpz_class& q) {
  install_wiping_gmp_allocator();
  if (p <= 2 || q <= 2 || p == q || p * q != pub.n()) {
    return invalid_argument_error("Paillier private key: p q != N");
  }
  PaillierPrivateKey key(pub);
  key.p_ = p;
  key.q_ = q;
  key.p2_ = p * p;
  key.q2_ = q * q;
  // h_p = (-q)^{-1} mod p, h_q = (-p)^{-1} mod q.
  mpz_class neg_q = p - (q % p);
  mpz_class neg_p = q - (p % q);
  if (mpz_invert(key.hp_.get_mpz_t(), neg_q.get_mpz_t(), p.get_mpz_t()) == 0 ||
      mpz_invert(key.hq_.get_mpz_t(), neg_p.get_mpz_t(), q.get_mpz_t()) == 0 ||
      mpz_invert(key.p_inv_q_.get_mpz_t(), p.get_mpz_t(), q.get_mpz_t()) == 0) {
    return invalid_argument_error("Paillier private key: p and q are not coprime");
  }
  mpz_class pm1 = p - 1, qm1 = q - 1;
  mpz_lcm(key.lambda_.get_mpz_t(), pm1.get_mpz_t(), qm1.get_mpz_t());
  if (mpz_invert(key.lambda_inv_.get_mpz_t(), key.lambda_.get_mpz_t(),
                 pub.plaintext_modulus().get_mpz_t()) == 0) {
    return invalid_argument_error("Paillier private key: gcd(lambda, N) != 1");
  }
  return key;
}

mpz_class PaillierPrivateKey::decrypt_crt(const mpz_class& c) const {
  auto half = [&c](const mpz_class& prime, const mpz_class& prime2, const mpz_class& h) {
    mpz_class base = c % prime2;
    mpz_class exp = prime - 1;
    mpz_class x;
    mpz_powm_sec(x.get_mpz_t(), base.get_mpz_t(), exp.get_mpz_t(), prime2.get_mpz_t());
    mpz_class l = (x - 1) / prime;  // exact: x = 1 mod prime
    return mpz_class(l * h % prime);
  };
  mpz_class mp = half(p_, p2_, hp_);
  mpz_class mq = half(q_, q2_, hq_);
  // m = mp + p ((mq - mp) p^{-1} mod q).
  mpz_class t = (mq - mp) % q_;
  if (t < 0) t += q_;
  t = t * p_inv_q_ % q_;
  return mpz_class(mp + p_ * t);
}

mpz_class PaillierPrivateKey::decrypt_dj(const mpz_class& c) const {
  const mpz_class& n = pub_.n();
  const int s = pub_.degree();
  mpz_class a;
  mpz_powm_sec(a.get_mpz_t(), c.get_mpz_t(), lambda_.get_mpz_t(),
               pub_.ciphertext_modulus().get_mpz_t());
  // Damgard-Jurik 2001, theorem 1's algorithm: recover i = m lambda mod N^s from a = (1+N)^i.
  mpz_class i = 0;
  mpz_class nj = 1;  // N^j
  for (int j = 1; j <= s; ++j) {
    mpz_class nj1;
    nj *= n;
    nj1 = nj * n;
    mpz_class t1 = ((a % nj1) - 1) / n;  // L(a mod N^{j+1})
    mpz_class t2 = i;
    mpz_class nk = 1;
    mpz_class fact = 1;
    for (int k = 2; k <= j; ++k) {
      i -= 1;
      t2 = t2 * i % nj;
      nk *= n;  // N^{k-1}
      fact *= k;
      mpz_class inv_fact;
      mpz_invert(inv_fact.get_mpz_t(), fact.get_mpz_t(), nj.get_mpz_t());
      t1 = (t1 - t2 * nk % nj * inv_fact) % nj;
    }
    if (t1 < 0) t1 += nj;
    i = t1;
  }
  return mpz_class(i * lambda_inv_ % pub_.plaintext_modulus());
}

mpz_class PaillierPrivateKey::decrypt_unchecked(const mpz_class& c) const {
  return pub_.degree() == 1 ? decrypt_crt(c) : decrypt_dj(c);
}

Result<mpz_class> PaillierPrivateKey::decrypt(const mpz_class& c) const {
  PRIVSEARCH_RETURN_IF_ERROR(pub_.validate_ciphertext(c));
  return decrypt_unchecked(c);
}

Result<mpz_class> PaillierPrivateKey::decrypt_signed(const mpz_class& c) const {
  PRIVSEARCH_ASSIGN_OR_RETURN(mpz_class m, decrypt(c));
  const mpz_class& ns = pub_.plaintext_modulus();
  if (2 * m > ns) m -= ns;
  return m;
}

std::vector<std::uint8_t> PaillierPrivateKey::serialize() const {
  ByteWriter w;
  w.put_bytes(kPrivateMagic);
  w.put_u8(kVersion);
  const auto pub = pub_.serialize();
  w.put_u32(static_cast<std::uint32_t>(pub.size()));
  w.put_bytes(pub);
  const std::size_t half = (pub_.modulus_bits() + 7) / 8;
  auto pb = to_fixed_bytes(p_, half);
  auto qb = to_fixed_bytes(q_, half);
  w.put_bytes(pb);
  w.put_bytes(qb);
  secure_zero(pb.data(), pb.size());
  secure_zero(qb.data(), qb.size());
  return w.take();
}

Result<PaillierPrivateKey> PaillierPrivateKey::deserialize(std::span<const std::uint8_t> bytes,
                                                           bool allow_insecure) {
  install_wiping_gmp_allocator();
  ByteReader r(bytes);
  PRIVSEARCH_RETURN_IF_ERROR(read_private_magic(r));
  std::uint32_t pub_len = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(pub_len));
  if (pub_len > r.remaining()) return data_loss_error("Paillier private key: truncated");
  std::vector<std::uint8_t> pub_bytes(pub_len);
  PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(pub_bytes));
  PRIVSEARCH_ASSIGN_OR_RETURN(PaillierPublicKey pub,
                              PaillierPublicKey::deserialize(pub_bytes, allow_insecure));
  const std::size_t half = (pub.modulus_bits() + 7) / 8;
  std::vector<std::uint8_t> pb(half), qb(half);
  PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(pb));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(qb));
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  mpz_class p = read_fixed(pb), q = read_fixed(qb);
  secure_zero(pb.data(), pb.size());
  secure_zero(qb.data(), qb.size());
  return from_primes(pub, p, q);
}

Result<PaillierKeyPair> paillier_keygen(int bits, Prng& prng, int degree, bool allow_insecure) {
  install_wiping_gmp_allocator();
  PRIVSEARCH_RETURN_IF_ERROR(
      detail::check_paillier_bits(static_cast<std::size_t>(bits), allow_insecure));
  if (bits % 2 != 0) {
    return invalid_argument_error("Paillier `modulus_bits` = " + std::to_string(bits) +
                                  " must be even");
  }
  for (;;) {
    mpz_class p = random_prime(bits / 2, prng);
    mpz_class q = random_prime(bits / 2, prng);
    if (p == q) continue;
    mpz_class n = p * q;
    if (bit_length(n) != static_cast<std::size_t>(bits)) continue;
    PRIVSEARCH_ASSIGN_OR_RETURN(PaillierPublicKey pub,
                                PaillierPublicKey::create(n, degree, allow_insecure));
    auto priv = PaillierPrivateKey::from_primes(pub, p, q);
    if (!priv.ok()) continue;  // gcd(lambda, N) != 1: astronomically rare, draw again
    return PaillierKeyPair{std::move(pub), std::move(priv).value()};
  }
}

}  // namespace privsearch::pir

// Marks this binary as containing the Paillier private key (core/linkage.h).
extern "C" void privsearch_linked_paillier_private() {}
