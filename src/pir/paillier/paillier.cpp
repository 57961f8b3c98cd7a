#include "pir/paillier/paillier.h"

#include <string>

#include "core/bytes.h"
#include "core/secure_buffer.h"
#include "pir/paillier/bigint.h"

namespace privsearch::pir {
namespace {

constexpr std::uint8_t kPublicMagic[4] = {'P', 'S', 'P', 'K'};
constexpr std::uint8_t kVersion = 1;

}  // namespace

namespace detail {
Status check_paillier_bits(std::size_t bits, bool allow_insecure) {
  if (bits > static_cast<std::size_t>(kPaillierMaxBits)) {
    return out_of_range_error("Paillier `modulus_bits` = " + std::to_string(bits) +
                              " exceeds the limit " + std::to_string(kPaillierMaxBits));
  }
  if (bits < static_cast<std::size_t>(kPaillierMinSecureBits) && !allow_insecure) {
    return invalid_argument_error("Paillier `modulus_bits` = " + std::to_string(bits) +
                                  " is below the 2048-bit minimum (3072 is the 128-bit level)");
  }
  if (bits < 64) {
    return invalid_argument_error("Paillier `modulus_bits` = " + std::to_string(bits) +
                                  " is too small even for tests (>= 64)");
  }
  return Status();
}

}  // namespace detail

namespace {

Status read_magic(ByteReader& r, const std::uint8_t (&magic)[4], const char* what) {
  std::uint8_t got[4];
  PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(got));
  for (int i = 0; i < 4; ++i) {
    if (got[i] != magic[i]) return data_loss_error(std::string(what) + ": bad magic");
  }
  std::uint8_t version = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u8(version));
  if (version != kVersion) {
    return failed_precondition_error(
        std::string(what) + ": `version` = " + std::to_string(version) + ", this build reads 1");
  }
  return Status();
}

}  // namespace

// --- public key ---------------------------------------------------------------------------

namespace {

// The product of the odd primes below 4096 (computed once).
const mpz_class& small_prime_product() {
  static const mpz_class product = [] {
    mpz_class p = 1;
    for (unsigned q = 3; q < 4096; q += 2) {
      bool prime = true;
      for (unsigned d = 3; d * d <= q; d += 2) {
        if (q % d == 0) {
          prime = false;
          break;
        }
      }
      if (prime) p *= q;
    }
    return p;
  }();
  return product;
}

}  // namespace

Result<PaillierPublicKey> PaillierPublicKey::create(const mpz_class& n, int degree,
                                                    bool allow_insecure) {
  if (degree < 1 || degree > kPaillierMaxDegree) {
    return out_of_range_error("Paillier `degree` = " + std::to_string(degree) + " is outside [1, " +
                              std::to_string(kPaillierMaxDegree) + "]");
  }
  const std::size_t bits = bit_length(n);
  PRIVSEARCH_RETURN_IF_ERROR(detail::check_paillier_bits(bits, allow_insecure));
  if (mpz_even_p(n.get_mpz_t()) != 0) return invalid_argument_error("Paillier `N` is even");
  if (mpz_perfect_square_p(n.get_mpz_t()) != 0) {
    return invalid_argument_error("Paillier `N` is a perfect square");
  }
  // N = p q with two large primes has no small factor; a forged modulus usually does, and one
  // gcd with the product of the odd primes below 2^12 (a 5.6 kbit number) finds it cheaply.
  mpz_class g;
  mpz_gcd(g.get_mpz_t(), n.get_mpz_t(), small_prime_product().get_mpz_t());
  if (g != 1) {
    return invalid_argument_error(
        "Paillier `N` has a small prime factor (gcd with the odd primes "
        "below 4096: " +
        g.get_str() + ")");
  }
  PaillierPublicKey key;
  key.n_ = n;
  key.degree_ = degree;
  key.bits_ = bits;
  mpz_pow_ui(key.ns_.get_mpz_t(), n.get_mpz_t(), static_cast<unsigned long>(degree));
  key.ns1_ = key.ns_ * n;
  key.inv_factorial_.resize(static_cast<std::size_t>(degree) + 1);
  mpz_class fact = 1;
  for (int k = 0; k <= degree; ++k) {
    if (k > 0) fact *= k;
    mpz_class inv;
    if (mpz_invert(inv.get_mpz_t(), fact.get_mpz_t(), key.ns1_.get_mpz_t()) == 0) {
      return invalid_argument_error("Paillier `N` shares a factor with " + std::to_string(k) + "!");
    }
    key.inv_factorial_[static_cast<std::size_t>(k)] = inv;
  }
  return key;
}

mpz_class PaillierPublicKey::one_plus_n_pow(const mpz_class& m) const {
  // sum_{k=0}^{s} binom(m, k) N^k with binom(m, k) = m (m-1) ... (m-k+1) / k! mod N^{s+1}.
  mpz_class result = 1;
  mpz_class falling = 1;
  mpz_class npow = 1;
  for (int k = 1; k <= degree_; ++k) {
    falling = falling * (m - (k - 1)) % ns1_;
    npow *= n_;
    mpz_class term = falling * inv_factorial_[static_cast<std::size_t>(k)] % ns1_;
    result = (result + term * npow) % ns1_;
  }
  if (result < 0) result += ns1_;
  return result;
}

Result<mpz_class> PaillierPublicKey::encrypt(const mpz_class& m, Prng& prng) const {
  if (m < 0 || m >= ns_) {
    return out_of_range_error("Paillier plaintext is outside [0, N^s)");
  }
  mpz_class r;
  do {
    r = random_below(n_, prng);
  } while (r == 0 || gcd(r, n_) != 1);
  mpz_class rn;
  mpz_powm_sec(rn.get_mpz_t(), r.get_mpz_t(), ns_.get_mpz_t(), ns1_.get_mpz_t());
  r = 0;
  return mpz_class(one_plus_n_pow(m) * rn % ns1_);
}

Status PaillierPublicKey::validate_ciphertext(const mpz_class& c) const {
  if (c <= 0 || c >= ns1_) {
    return data_loss_error("Paillier ciphertext is outside (0, N^{s+1})");
  }
  if (gcd(c, n_) != 1) {
    return data_loss_error("Paillier ciphertext is not coprime to N");
  }
  return Status();
}

mpz_class PaillierPublicKey::add(const mpz_class& c1, const mpz_class& c2) const {
  return c1 * c2 % ns1_;
}

mpz_class PaillierPublicKey::scalar_mul(const mpz_class& c, const mpz_class& k) const {
  mpz_class e = k % ns_;
  if (e < 0) e += ns_;
  mpz_class out;
  mpz_powm(out.get_mpz_t(), c.get_mpz_t(), e.get_mpz_t(), ns1_.get_mpz_t());
  return out;
}

mpz_class PaillierPublicKey::add_plain(const mpz_class& c, const mpz_class& m) const {
  mpz_class mm = m % ns_;
  if (mm < 0) mm += ns_;
  return c * one_plus_n_pow(mm) % ns1_;
}

std::vector<std::uint8_t> PaillierPublicKey::ciphertext_to_bytes(const mpz_class& c) const {
  return to_fixed_bytes(c, ciphertext_bytes());
}

Result<mpz_class> PaillierPublicKey::ciphertext_from_bytes(
    std::span<const std::uint8_t> bytes) const {
  if (bytes.size() != ciphertext_bytes()) {
    return data_loss_error("Paillier ciphertext has " + std::to_string(bytes.size()) +
                           " bytes, expected " + std::to_string(ciphertext_bytes()));
  }
  mpz_class c = read_fixed(bytes);
  PRIVSEARCH_RETURN_IF_ERROR(validate_ciphertext(c));
  return c;
}

std::vector<std::uint8_t> PaillierPublicKey::serialize() const {
  ByteWriter w;
  w.put_bytes(kPublicMagic);
  w.put_u8(kVersion);
  w.put_u8(static_cast<std::uint8_t>(degree_));
  w.put_u16(static_cast<std::uint16_t>(bits_));
  w.put_bytes(to_fixed_bytes(n_, (bits_ + 7) / 8));
  return w.take();
}

Result<PaillierPublicKey> PaillierPublicKey::deserialize(std::span<const std::uint8_t> bytes,
                                                         bool allow_insecure) {
  ByteReader r(bytes);
  PRIVSEARCH_RETURN_IF_ERROR(read_magic(r, kPublicMagic, "Paillier public key"));
  std::uint8_t degree = 0;
  std::uint16_t bits = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u8(degree));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u16(bits));
  PRIVSEARCH_RETURN_IF_ERROR(detail::check_paillier_bits(bits, allow_insecure));
  std::vector<std::uint8_t> nbytes((bits + 7u) / 8u);
  PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(nbytes));
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  mpz_class n = read_fixed(nbytes);
  if (bit_length(n) != bits) {
    return data_loss_error("Paillier public key: `N` has " + std::to_string(bit_length(n)) +
                           " bits, header says " + std::to_string(bits));
  }
  return create(n, degree, allow_insecure);
}

}  // namespace privsearch::pir
