#include <openssl/evp.h>
#include <openssl/rand.h>

#include <array>

#include "core/check.h"
#include "core/csprng_backend.h"

namespace privsearch::detail {
namespace {
constexpr std::array<std::uint8_t, 1024> kZeros{};
}

void os_entropy(std::span<std::uint8_t> out) {
  PRIVSEARCH_CHECK(RAND_bytes(out.data(), static_cast<int>(out.size())) == 1,
                   "OpenSSL RAND_bytes failed");
}

// Both uses are AES-256-CTR here. Initial counter block: stream number (big endian) || 64-bit
// block counter starting at 0.
void* open_keystream(const Seed& key, std::uint64_t stream, KeystreamUse) {
  auto* ctx = EVP_CIPHER_CTX_new();
  PRIVSEARCH_CHECK(ctx != nullptr, "EVP_CIPHER_CTX_new failed");
  std::array<std::uint8_t, 16> iv{};
  for (int i = 0; i < 8; ++i)
    iv[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(stream >> (56 - 8 * i));
  PRIVSEARCH_CHECK(EVP_EncryptInit_ex(ctx, EVP_aes_256_ctr(), nullptr, key.data(), iv.data()) == 1,
                   "EVP_EncryptInit_ex failed");
  return ctx;
}

void next_keystream(void* keystream, std::span<std::uint8_t> out) {
  PRIVSEARCH_CHECK(out.size() <= kZeros.size(), "keystream request above the buffer");
  int len = 0;
  PRIVSEARCH_CHECK(EVP_EncryptUpdate(static_cast<EVP_CIPHER_CTX*>(keystream), out.data(), &len,
                                     kZeros.data(), static_cast<int>(out.size())) == 1 &&
                       len == static_cast<int>(out.size()),
                   "EVP_EncryptUpdate failed");
}

void close_keystream(void* keystream) {
  EVP_CIPHER_CTX_free(static_cast<EVP_CIPHER_CTX*>(keystream));
}

}  // namespace privsearch::detail
