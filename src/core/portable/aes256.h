// AES-256 (FIPS 197) in portable C++ and its CTR keystream, bit for bit the stream OpenSSL's
// EVP_aes_256_ctr makes (128-bit big-endian counter block), for builds without OpenSSL: the
// WebAssembly client (web/wasm). Natively, tests compare it with OpenSSL on random keys.
// Security: the S-box is a table lookup, so its timing depends on the key and data; the client
// uses this stream only to expand PUBLIC seeds (the seeded `a` of ciphertexts and keys, the
// lexical encoder's projection): every OS-seeded (secret) stream of that build is ChaCha20
// (core/portable/chacha20.h), whose arithmetic has no secret-dependent branch or index.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace privsearch::portable {

class Aes256Ctr {
 public:
  // The keystream of `key` from the counter block `iv` (16 bytes, big-endian counter).
  Aes256Ctr(const std::array<std::uint8_t, 32>& key, const std::array<std::uint8_t, 16>& iv);
  ~Aes256Ctr();
  Aes256Ctr(const Aes256Ctr&) = delete;
  Aes256Ctr& operator=(const Aes256Ctr&) = delete;

  // The next `n` bytes of keystream (any n: a partial block is continued by the next call).
  void generate(std::uint8_t* out, std::size_t n);
  // One block: out = AES-256_key(in).
  void encrypt_block(const std::uint8_t in[16], std::uint8_t out[16]) const;

 private:
  std::array<std::uint32_t, 60> round_keys_{};  // 15 round keys, big-endian words
  std::array<std::uint8_t, 16> counter_{};
  std::array<std::uint8_t, 16> block_{};
  std::size_t used_ = 16;
};

}  // namespace privsearch::portable
