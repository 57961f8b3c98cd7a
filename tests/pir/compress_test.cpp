#include "pir/zippir/compress.h"

#include <gtest/gtest.h>

#include "pir/paillier/bigint.h"

namespace privsearch::pir {
namespace {

PaillierKeyPair keys(int bits) {
  Prng prng = Prng::from_seed(Seed{21}, static_cast<std::uint64_t>(bits));
  return *paillier_keygen(bits, prng, 1, true);
}

// Small LWE shapes keep Paillier work small; the algebra is the same at n = 1400.
TEST(Compress, SingleRecoversEveryMessageBinaryAndUniform) {
  auto kp = keys(1024);
  Prng prng = Prng::from_seed(Seed{1});
  for (bool binary : {true, false}) {
    LweScheme s{32, 32, 4, binary};
    auto sk = lwe_keygen(s, prng);
    auto ck = make_compression_key(kp.public_key, sk, prng);
    for (std::uint64_t mu = 0; mu < 16; ++mu) {
      auto ct = lwe_encrypt(s, sk, mu, 3.2, prng);
      ASSERT_EQ(lwe_decrypt(s, sk, ct), mu);
      auto c = compress_single(kp.public_key, ck, s, ct);
      ASSERT_TRUE(c.ok()) << c.status().to_string();
      EXPECT_EQ(decrypt_compressed_single(kp.private_key, *c, s), mu) << binary;
    }
  }
}

TEST(Compress, SingleRefusesTooSmallPlaintextSpace) {
  auto kp = keys(256);
  Prng prng = Prng::from_seed(Seed{2});
  LweScheme s{64, 64, 4, false};  // q + n q^2 ~ 2^134 fits, but scaled constant must too
  auto sk = lwe_keygen(s, prng);
  auto ck = make_compression_key(kp.public_key, sk, prng);
  auto ct = lwe_encrypt(s, sk, 3, 3.2, prng);
  mpz_class huge = 1;
  mpz_mul_2exp(huge.get_mpz_t(), huge.get_mpz_t(), 200);
  EXPECT_EQ(compress_single(kp.public_key, ck, s, ct, huge).status().code(),
            StatusCode::kInvalidArgument);
  LweCiphertext short_ct = ct;
  short_ct.a.pop_back();
  EXPECT_FALSE(compress_single(kp.public_key, ck, s, short_ct).ok());
}

TEST(Compress, PackedKeyUnpacksAndDecrypts) {
  auto kp = keys(1024);
  Prng prng = Prng::from_seed(Seed{3});
  for (bool binary : {true, false}) {
    LweScheme s{24, 32, 4, binary};
    auto sk = lwe_keygen(s, prng);
    const auto layout = packed_key_layout(s, kp.public_key);
    ASSERT_GT(layout.digits_per_ciphertext, 1u);
    auto packed = make_packed_compression_key(kp.public_key, sk, layout, prng);
    EXPECT_EQ(packed.size(), layout.ciphertexts);
    EXPECT_LT(packed.size(), s.n);  // smaller than the unpacked key
    auto ck = unpack_compression_key(kp.public_key, packed, layout, s.n);
    mpz_class scale = 1;
    for (std::size_t k = 1; k < layout.digits_per_ciphertext; ++k) scale *= layout.delta;
    for (std::uint64_t mu : {0u, 5u, 15u}) {
      auto ct = lwe_encrypt(s, sk, mu, 3.2, prng);
      auto c = compress_single(kp.public_key, ck, s, ct, scale);
      ASSERT_TRUE(c.ok());
      EXPECT_EQ(decrypt_compressed_packed(kp.private_key, *c, s, layout), mu) << binary;
    }
  }
}

TEST(Compress, BatchedExactAndOverlapRecoverEveryMessage) {
  auto kp = keys(1024);
  Prng prng = Prng::from_seed(Seed{4});
  for (bool binary : {true, false}) {
    for (auto scale : {CompressionScale::kExact, CompressionScale::kOverlap}) {
      for (bool ifma : {false, true}) {
        LweScheme s{40, 32, 8, binary};
        auto sk = lwe_keygen(s, prng);
        auto ck = make_compression_key(kp.public_key, sk, prng);
        const std::size_t cap = ciphertexts_per_plaintext(s, scale, 1024);
        ASSERT_GT(cap, 1u);
        std::vector<LweCiphertext> cts;
        std::vector<std::uint64_t> mus;
        for (std::size_t j = 0; j < cap; ++j) {
          mus.push_back(prng.next_u64() & 255);
          cts.push_back(lwe_encrypt(s, sk, mus.back(), 3.2, prng));
        }
        auto c = compress_batch(kp.public_key, ck, s, cts, scale, ifma);
        ASSERT_TRUE(c.ok()) << c.status().to_string();
        EXPECT_EQ(decrypt_compressed_batch(kp.private_key, *c, s, cap, scale), mus)
            << binary << " " << static_cast<int>(scale);
        cts.push_back(cts[0]);  // one too many
        EXPECT_EQ(compress_batch(kp.public_key, ck, s, cts, scale).status().code(),
                  StatusCode::kOutOfRange);
      }
    }
  }
}

TEST(Compress, OverlapFitsMoreThanExact) {
  LweScheme s{1400, 32, 8, true};
  // The authors' library rounds the scale up to 43 bits (71); the exact scale 1401 q fits 72.
  EXPECT_EQ(ciphertexts_per_plaintext(s, CompressionScale::kExact, 3072), 72u);
  EXPECT_EQ(ciphertexts_per_plaintext(s, CompressionScale::kOverlap, 3072), 95u);
  LweScheme u{1400, 32, 8, false};
  EXPECT_EQ(ciphertexts_per_plaintext(u, CompressionScale::kExact, 3072), 41u);
}

TEST(Compress, RescaledCiphertextsCompressWithShorterExponents) {
  auto kp = keys(1024);
  Prng prng = Prng::from_seed(Seed{5});
  LweScheme s{32, 32, 4, true};
  auto sk = lwe_keygen(s, prng);
  auto ck = make_compression_key(kp.public_key, sk, prng);
  LweScheme small{32, 16, 4, true};
  std::vector<LweCiphertext> cts;
  std::vector<std::uint64_t> mus;
  for (int j = 0; j < 10; ++j) {
    mus.push_back(prng.next_u64() & 15);
    cts.push_back(rescale_lwe(s, lwe_encrypt(s, sk, mus.back(), 3.2, prng), 16));
    EXPECT_EQ(lwe_decrypt(small, sk, cts.back()), mus.back());
  }
  auto c = compress_batch(kp.public_key, ck, small, cts, CompressionScale::kOverlap);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(
      decrypt_compressed_batch(kp.private_key, *c, small, cts.size(), CompressionScale::kOverlap),
      mus);
}

TEST(Compress, RlweCoefficientCompresses) {
  auto kp = keys(1024);
  Prng prng = Prng::from_seed(Seed{6});
  const std::size_t n = 16;
  LweScheme s{n, 32, 4, true};
  auto sk = lwe_keygen(s, prng);
  auto ck = make_compression_key(kp.public_key, sk, prng);
  // c0 = -c1 s + e + Delta m in Z_q[X]/(X^n + 1), computed naively.
  std::vector<std::uint64_t> c1(n), c0(n), m(n);
  for (auto& v : c1) v = prng.next_u64() & s.q_mask();
  for (auto& v : m) v = prng.next_u64() & 15;
  for (std::size_t k = 0; k < n; ++k) {
    std::uint64_t prod = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (i <= k)
        prod += c1[k - i] * sk[i];
      else
        prod -= c1[n + k - i] * sk[i];
    }
    const std::uint64_t e = prng.next_u64() % 7;
    c0[k] = (std::uint64_t{0} - prod + e + (m[k] << 28)) & s.q_mask();
  }
  for (std::size_t k = 0; k < n; ++k) {
    auto ct = lwe_from_rlwe_coefficient(c0, c1, k, s.q_mask());
    ASSERT_EQ(lwe_decrypt(s, sk, ct), m[k]);
    auto c = compress_single(kp.public_key, ck, s, ct);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(decrypt_compressed_single(kp.private_key, *c, s), m[k]);
  }
}

}  // namespace
}  // namespace privsearch::pir
