// The OpenSSL-free primitives of the WebAssembly build (core/portable) against OpenSSL on random
// keys, lengths and chunkings, and against the standards' own test vectors: the browser client
// expands the same seeds the provider expands, so AES-256-CTR must agree bit for bit.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <array>
#include <string>
#include <vector>

#include "core/csprng.h"
#include "core/portable/aes256.h"
#include "core/portable/chacha20.h"
#include "core/portable/sha256.h"
#include "core/sha256.h"

namespace privsearch {
namespace {

std::vector<std::uint8_t> openssl_keystream(const EVP_CIPHER* cipher, const std::uint8_t* key,
                                            const std::uint8_t* iv, std::size_t n) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  EXPECT_EQ(EVP_EncryptInit_ex(ctx, cipher, nullptr, key, iv), 1);
  std::vector<std::uint8_t> zeros(n), out(n);
  int len = 0;
  EXPECT_EQ(EVP_EncryptUpdate(ctx, out.data(), &len, zeros.data(), static_cast<int>(n)), 1);
  EVP_CIPHER_CTX_free(ctx);
  return out;
}

// Draws in uneven pieces (1, 2, ... bytes), so partial blocks are continued correctly.
template <typename Stream>
std::vector<std::uint8_t> chunked(Stream& s, std::size_t n) {
  std::vector<std::uint8_t> out(n);
  for (std::size_t done = 0, piece = 1; done < n; ++piece) {
    const std::size_t take = std::min(piece, n - done);
    s.generate(out.data() + done, take);
    done += take;
  }
  return out;
}

std::vector<std::uint8_t> from_hex(const std::string& hex) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<std::uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

TEST(PortableAes, Fips197Aes256KnownAnswer) {
  // FIPS 197 appendix C.3.
  std::array<std::uint8_t, 32> key{};
  for (std::size_t i = 0; i < 32; ++i) key[i] = static_cast<std::uint8_t>(i);
  const auto plain = from_hex("00112233445566778899aabbccddeeff");
  portable::Aes256Ctr aes(key, {});
  std::uint8_t out[16];
  aes.encrypt_block(plain.data(), out);
  EXPECT_EQ(to_hex(out), "8ea2b7ca516745bfeafc49904b496089");
}

TEST(PortableAes, CtrStreamEqualsOpenSslOnRandomKeys) {
  Prng prng = Prng::from_seed(Seed{7}, 1);
  for (int trial = 0; trial < 20; ++trial) {
    std::array<std::uint8_t, 32> key;
    std::array<std::uint8_t, 16> iv;
    prng.fill(key);
    prng.fill(iv);
    if (trial == 0) iv.fill(0xff);  // the counter wraps through every byte
    const std::size_t n = 1 + prng.uniform_below(5000);
    portable::Aes256Ctr aes(key, iv);
    EXPECT_EQ(chunked(aes, n), openssl_keystream(EVP_aes_256_ctr(), key.data(), iv.data(), n))
        << "trial " << trial << ", " << n << " bytes";
  }
}

TEST(PortableChaCha, Rfc8439BlockFunctionKnownAnswer) {
  // RFC 8439 section 2.3.2: key 00..1f, nonce 00:00:00:09:00:00:00:4a:00:00:00:00, counter 1.
  std::array<std::uint8_t, 32> key{};
  for (std::size_t i = 0; i < 32; ++i) key[i] = static_cast<std::uint8_t>(i);
  const std::array<std::uint8_t, 12> nonce{0, 0, 0, 9, 0, 0, 0, 0x4a, 0, 0, 0, 0};
  portable::ChaCha20 chacha(key, 1, nonce);
  std::array<std::uint8_t, 64> block;
  chacha.generate(block.data(), block.size());
  EXPECT_EQ(to_hex(block),
            "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
            "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e");
}

TEST(PortableChaCha, StreamEqualsOpenSslOnRandomKeys) {
  Prng prng = Prng::from_seed(Seed{8}, 2);
  for (int trial = 0; trial < 20; ++trial) {
    std::array<std::uint8_t, 32> key;
    std::array<std::uint8_t, 12> nonce;
    prng.fill(key);
    prng.fill(nonce);
    const auto counter = static_cast<std::uint32_t>(prng.uniform_below(1u << 20));
    const std::size_t n = 1 + prng.uniform_below(5000);
    // OpenSSL's 16-byte IV: the 32-bit counter (little endian), then the nonce.
    std::array<std::uint8_t, 16> iv{};
    for (int b = 0; b < 4; ++b)
      iv[static_cast<std::size_t>(b)] = static_cast<std::uint8_t>(counter >> (8 * b));
    std::copy(nonce.begin(), nonce.end(), iv.begin() + 4);
    portable::ChaCha20 chacha(key, counter, nonce);
    EXPECT_EQ(chunked(chacha, n), openssl_keystream(EVP_chacha20(), key.data(), iv.data(), n))
        << "trial " << trial;
  }
}

// Past 2^32 blocks the counter carries into the nonce, as OpenSSL's does: the stream never
// comes back to its first block (the CSPRNG's zero-nonce stream in the WebAssembly client).
TEST(PortableChaCha, CounterCarriesIntoTheNonceInsteadOfWrapping) {
  std::array<std::uint8_t, 32> key{};
  key[0] = 7;
  const std::array<std::uint8_t, 12> zero{};
  std::array<std::uint8_t, 16> iv{0xfe, 0xff, 0xff, 0xff};
  portable::ChaCha20 near_wrap(key, 0xfffffffeu, zero);
  const std::size_t n = 3 * 64 + 5;
  const auto stream = chunked(near_wrap, n);
  EXPECT_EQ(stream, openssl_keystream(EVP_chacha20(), key.data(), iv.data(), n));
  portable::ChaCha20 first(key, 0, zero);
  const auto block0 = chunked(first, 64);
  // Bytes 128..191 are block 2^32 (the third from 2^32 - 2): not block 0 again.
  EXPECT_NE(std::vector<std::uint8_t>(stream.begin() + 128, stream.begin() + 192), block0);
}

std::string portable_sha256_hex(const std::vector<std::uint8_t>& data, std::size_t piece) {
  portable::Sha256State s;
  for (std::size_t done = 0; done < data.size();) {
    const std::size_t take = std::min(piece, data.size() - done);
    s.update(data.data() + done, take);
    done += take;
  }
  const auto d = s.finish();
  return to_hex(d);
}

TEST(PortableSha256, Fips180KnownAnswers) {
  const std::string abc = "abc";
  const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  EXPECT_EQ(portable_sha256_hex({}, 1),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(portable_sha256_hex({abc.begin(), abc.end()}, 1),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(portable_sha256_hex({two_blocks.begin(), two_blocks.end()}, 7),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(PortableSha256, EqualsOpenSslOnEveryPaddingLength) {
  Prng prng = Prng::from_seed(Seed{9}, 3);
  for (std::size_t n = 0; n < 300; ++n) {  // every length mod 64, several blocks
    std::vector<std::uint8_t> data(n);
    prng.fill(data);
    EXPECT_EQ(portable_sha256_hex(data, 1 + n % 70), to_hex(sha256(data))) << n << " bytes";
  }
}

}  // namespace
}  // namespace privsearch
