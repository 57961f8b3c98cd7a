// SHA-256 (FIPS 180-4) through OpenSSL's EVP interface: content ids for params, key sets and
// artifacts. Thread safety: Sha256 objects are not shared; sha256() is reentrant.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace privsearch {

using Sha256Digest = std::array<std::uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(std::span<const std::uint8_t> data);
  void update(std::string_view text);
  // Finishes the hash; the object must not be updated afterwards.
  Sha256Digest finish();

 private:
  void* ctx_;  // EVP_MD_CTX*, kept out of the header
};

Sha256Digest sha256(std::span<const std::uint8_t> data);
std::string to_hex(std::span<const std::uint8_t> bytes);

}  // namespace privsearch
