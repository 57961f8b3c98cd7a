#include <gtest/gtest.h>

#include "pir/paillier/bigint.h"
#include "pir/paillier/multiexp.h"
#include "pir/paillier/paillier_private.h"

namespace privsearch::pir {
namespace {

// A 512-bit key is insecure; it keeps the tests fast. One 2048-bit case checks the real size.
PaillierKeyPair test_keys(int bits = 512, int degree = 1) {
  Prng prng = Prng::from_seed(Seed{7}, static_cast<std::uint64_t>(bits * 10 + degree));
  auto kp = paillier_keygen(bits, prng, degree, /*allow_insecure=*/true);
  EXPECT_TRUE(kp.ok()) << kp.status().to_string();
  return std::move(kp).value();
}

TEST(Paillier, EncryptDecryptRoundTripAndCrtMatchesDefinition) {
  auto kp = test_keys();
  const auto& pub = kp.public_key;
  Prng prng = Prng::from_seed(Seed{1});
  for (int trial = 0; trial < 20; ++trial) {
    mpz_class m = random_below(pub.n(), prng);
    auto c = pub.encrypt(m, prng);
    ASSERT_TRUE(c.ok());
    EXPECT_TRUE(pub.validate_ciphertext(*c).ok());
    auto d = kp.private_key.decrypt(*c);
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(*d, m);
  }
}

// Reference decryption straight from Paillier's paper: m = L(c^lambda mod N^2) mu mod N.
TEST(Paillier, CrtDecryptionEqualsTextbookDecryption) {
  Prng kprng = Prng::from_seed(Seed{3});
  auto kp = paillier_keygen(512, kprng, 1, true);
  ASSERT_TRUE(kp.ok());
  const auto bytes = kp->private_key.serialize();
  // Recover p, q through the serialized form to compute the textbook path independently.
  const std::size_t half = 64;  // p and q are stored at the width of N
  mpz_class p = read_fixed(std::span(bytes).subspan(bytes.size() - 2 * half, half));
  mpz_class q = read_fixed(std::span(bytes).subspan(bytes.size() - half, half));
  const mpz_class n = kp->public_key.n(), n2 = n * n;
  mpz_class lambda, pm1 = p - 1, qm1 = q - 1;
  mpz_lcm(lambda.get_mpz_t(), pm1.get_mpz_t(), qm1.get_mpz_t());
  mpz_class g = n + 1, u, mu;
  mpz_powm(u.get_mpz_t(), g.get_mpz_t(), lambda.get_mpz_t(), n2.get_mpz_t());
  mpz_class lu = (u - 1) / n;
  ASSERT_NE(mpz_invert(mu.get_mpz_t(), lu.get_mpz_t(), n.get_mpz_t()), 0);
  Prng prng = Prng::from_seed(Seed{4});
  for (int trial = 0; trial < 10; ++trial) {
    mpz_class c = random_below(n2, prng);
    if (gcd(c, n) != 1) continue;
    mpz_class x;
    mpz_powm(x.get_mpz_t(), c.get_mpz_t(), lambda.get_mpz_t(), n2.get_mpz_t());
    mpz_class expect = (x - 1) / n * mu % n;
    EXPECT_EQ(kp->private_key.decrypt_unchecked(c), expect);
  }
}

TEST(Paillier, HomomorphismsMatchPlaintextArithmetic) {
  auto kp = test_keys();
  const auto& pub = kp.public_key;
  Prng prng = Prng::from_seed(Seed{2});
  for (int trial = 0; trial < 10; ++trial) {
    mpz_class a = random_below(pub.n(), prng), b = random_below(pub.n(), prng);
    mpz_class k = random_below(pub.n(), prng);
    auto ca = pub.encrypt(a, prng), cb = pub.encrypt(b, prng);
    ASSERT_TRUE(ca.ok() && cb.ok());
    EXPECT_EQ(*kp.private_key.decrypt(pub.add(*ca, *cb)), mpz_class((a + b) % pub.n()));
    EXPECT_EQ(*kp.private_key.decrypt(pub.scalar_mul(*ca, k)), mpz_class(a * k % pub.n()));
    EXPECT_EQ(*kp.private_key.decrypt(pub.add_plain(*ca, b)), mpz_class((a + b) % pub.n()));
    mpz_class neg = -k;
    mpz_class expect = (a * neg) % pub.n();
    if (expect < 0) expect += pub.n();
    EXPECT_EQ(*kp.private_key.decrypt(pub.scalar_mul(*ca, neg)), expect);
  }
}

TEST(Paillier, SignedDecryptionCentres) {
  auto kp = test_keys();
  Prng prng = Prng::from_seed(Seed{5});
  auto c = kp.public_key.encrypt(kp.public_key.n() - 5, prng);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*kp.private_key.decrypt_signed(*c), -5);
}

class DamgardJurik : public ::testing::TestWithParam<int> {};

TEST_P(DamgardJurik, RoundTripAndHomomorphismsOverLargerPlaintexts) {
  const int s = GetParam();
  auto kp = test_keys(256, s);
  const auto& pub = kp.public_key;
  EXPECT_EQ(pub.plaintext_bytes(), static_cast<std::size_t>(32 * s));
  EXPECT_EQ(pub.ciphertext_bytes(), static_cast<std::size_t>(32 * (s + 1)));
  Prng prng = Prng::from_seed(Seed{9});
  for (int trial = 0; trial < 5; ++trial) {
    mpz_class a = random_below(pub.plaintext_modulus(), prng);
    mpz_class b = random_below(pub.plaintext_modulus(), prng);
    auto ca = pub.encrypt(a, prng), cb = pub.encrypt(b, prng);
    ASSERT_TRUE(ca.ok() && cb.ok());
    EXPECT_EQ(*kp.private_key.decrypt(*ca), a);
    EXPECT_EQ(*kp.private_key.decrypt(pub.add(*ca, *cb)),
              mpz_class((a + b) % pub.plaintext_modulus()));
    EXPECT_EQ(*kp.private_key.decrypt(pub.scalar_mul(*ca, 12345)),
              mpz_class(a * 12345 % pub.plaintext_modulus()));
  }
}
INSTANTIATE_TEST_SUITE_P(Degrees, DamgardJurik, ::testing::Values(1, 2, 3));

TEST(Paillier, RejectsInvalidCiphertexts) {
  auto kp = test_keys();
  const auto& pub = kp.public_key;
  EXPECT_EQ(pub.validate_ciphertext(0).code(), StatusCode::kDataLoss);
  EXPECT_EQ(pub.validate_ciphertext(pub.ciphertext_modulus()).code(), StatusCode::kDataLoss);
  // A multiple of a prime factor of N is not a unit.
  const auto bytes = kp.private_key.serialize();
  mpz_class p = read_fixed(std::span(bytes).subspan(bytes.size() - 128, 64));
  EXPECT_EQ(pub.validate_ciphertext(p * 3).code(), StatusCode::kDataLoss);
  EXPECT_EQ(kp.private_key.decrypt(p).status().code(), StatusCode::kDataLoss);
  std::vector<std::uint8_t> short_ct(pub.ciphertext_bytes() - 1, 1);
  EXPECT_EQ(pub.ciphertext_from_bytes(short_ct).status().code(), StatusCode::kDataLoss);
  Prng prng = Prng::from_seed(Seed{1});
  EXPECT_EQ(pub.encrypt(pub.n(), prng).status().code(), StatusCode::kOutOfRange);
}

TEST(Paillier, ParameterChecks) {
  Prng prng = Prng::from_seed(Seed{1});
  EXPECT_EQ(paillier_keygen(1024, prng).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(paillier_keygen(513, prng, 1, true).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(paillier_keygen(512, prng, 0, true).status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(PaillierPublicKey::create(mpz_class(1) << 2047, 1).status().code(),
            StatusCode::kInvalidArgument);  // even
  // A forged 2048-bit modulus with a small factor (the kind a hostile PirSetup sends): refused
  // before any hint work is queued for it.
  const mpz_class forged = 4093 * ((mpz_class(1) << 2036) + 1);  // odd, 2048 bits
  ASSERT_EQ(mpz_sizeinbase(forged.get_mpz_t(), 2), 2048u);
  const auto r = PaillierPublicKey::create(forged, 1);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("small prime factor"), std::string::npos)
      << r.status().message();
  // A real key passes.
  EXPECT_TRUE(PaillierPublicKey::create(test_keys().public_key.n(), 1, true).ok());
}

TEST(Paillier, SerializationRoundTripsAndRejectsDamage) {
  auto kp = test_keys();
  const auto pub_bytes = kp.public_key.serialize();
  auto pub = PaillierPublicKey::deserialize(pub_bytes, true);
  ASSERT_TRUE(pub.ok());
  EXPECT_EQ(pub->n(), kp.public_key.n());
  // Insecure sizes are refused unless the caller opts in.
  EXPECT_EQ(PaillierPublicKey::deserialize(pub_bytes).status().code(),
            StatusCode::kInvalidArgument);
  for (std::size_t cut = 0; cut < pub_bytes.size(); cut += 7) {
    EXPECT_FALSE(PaillierPublicKey::deserialize(std::span(pub_bytes).first(cut), true).ok());
  }
  auto bad = pub_bytes;
  bad[4] = 9;  // version
  EXPECT_EQ(PaillierPublicKey::deserialize(bad, true).status().code(),
            StatusCode::kFailedPrecondition);
  const auto priv_bytes = kp.private_key.serialize();
  auto priv = PaillierPrivateKey::deserialize(priv_bytes, true);
  ASSERT_TRUE(priv.ok());
  Prng prng = Prng::from_seed(Seed{6});
  auto c = kp.public_key.encrypt(42, prng);
  EXPECT_EQ(*priv->decrypt(*c), 42);
  auto tampered = priv_bytes;
  tampered.back() ^= 1;  // q no longer divides N
  EXPECT_FALSE(PaillierPrivateKey::deserialize(tampered, true).ok());
}

TEST(Paillier, RealSizeKey2048) {
  Prng prng = Prng::from_seed(Seed{11});
  auto kp = paillier_keygen(2048, prng);
  ASSERT_TRUE(kp.ok());
  EXPECT_EQ(kp->public_key.modulus_bits(), 2048u);
  EXPECT_EQ(kp->public_key.ciphertext_bytes(), 512u);
  auto c = kp->public_key.encrypt(123456789, prng);
  EXPECT_EQ(*kp->private_key.decrypt(*c), 123456789);
}

TEST(MultiExp, PippengerEqualsNaive) {
  Prng prng = Prng::from_seed(Seed{8});
  mpz_class m = random_bits(600, prng);
  mpz_setbit(m.get_mpz_t(), 599);
  mpz_setbit(m.get_mpz_t(), 0);
  for (std::size_t n : {1u, 2u, 7u, 64u, 300u}) {
    for (std::size_t bits : {1u, 13u, 64u, 700u}) {
      std::vector<mpz_class> b(n), e(n);
      for (std::size_t i = 0; i < n; ++i) {
        b[i] = random_below(m, prng);
        e[i] = random_bits(bits, prng);
      }
      if (n > 1) e[1] = 0;
      EXPECT_EQ(multi_exp(b, e, m), multi_exp_naive(b, e, m)) << n << " " << bits;
    }
  }
}

}  // namespace
}  // namespace privsearch::pir

namespace privsearch::pir {
namespace {

TEST(MultiExp, BatchedWindowsEqualNaive) {
  Prng prng = Prng::from_seed(Seed{12});
  mpz_class m = random_bits(700, prng);
  mpz_setbit(m.get_mpz_t(), 699);
  mpz_setbit(m.get_mpz_t(), 0);
  for (bool ifma : {false, true}) {
    auto mb = *MontgomeryBatch::create(m, ifma);
    for (std::size_t n : {1u, 3u, 40u, 200u}) {
      for (std::size_t bits : {5u, 64u, 900u}) {
        std::vector<mpz_class> b(n), e(n);
        for (std::size_t i = 0; i < n; ++i) {
          b[i] = random_below(m, prng);
          e[i] = random_bits(bits, prng);
        }
        if (n > 2) e[2] = 0;
        EXPECT_EQ(multi_exp_batched(mb, b, e), multi_exp_naive(b, e, m)) << n << " " << bits;
      }
    }
  }
}

}  // namespace
}  // namespace privsearch::pir
