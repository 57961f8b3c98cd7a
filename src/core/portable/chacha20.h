// ChaCha20 (RFC 8439) in portable C++: the keystream of the OS-seeded CSPRNG in builds without
// OpenSSL (the WebAssembly client). Only additions, rotations and xors of 32-bit words: no
// branch or memory index depends on the key, so its timing reveals nothing of it.
// Natively, tests compare it with OpenSSL's EVP_chacha20 and RFC 8439's test vector.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace privsearch::portable {

class ChaCha20 {
 public:
  // RFC 8439 section 2.4's stream: 256-bit key, 32-bit initial block counter, 96-bit nonce.
  ChaCha20(const std::array<std::uint8_t, 32>& key, std::uint32_t counter,
           const std::array<std::uint8_t, 12>& nonce);
  ~ChaCha20();
  ChaCha20(const ChaCha20&) = delete;
  ChaCha20& operator=(const ChaCha20&) = delete;

  // The next `n` bytes of keystream. Past 2^32 blocks (256 GiB) the counter carries into the
  // nonce's first word, as OpenSSL's does: no block of the stream repeats.
  void generate(std::uint8_t* out, std::size_t n);

 private:
  void next_block();
  std::array<std::uint32_t, 16> state_{};
  std::array<std::uint8_t, 64> block_{};
  std::size_t used_ = 64;
};

}  // namespace privsearch::portable
