// SHA-256 (FIPS 180-4) in portable C++, for builds without OpenSSL (the WebAssembly client:
// params ids, key ids, artifact hashes). Natively, tests compare it with OpenSSL's EVP digest.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace privsearch::portable {

class Sha256State {
 public:
  Sha256State();
  void update(const std::uint8_t* data, std::size_t n);
  std::array<std::uint8_t, 32> finish();

 private:
  void compress(const std::uint8_t block[64]);
  std::array<std::uint32_t, 8> h_{};
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

}  // namespace privsearch::portable
