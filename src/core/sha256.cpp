#include "core/sha256.h"

#include <openssl/evp.h>

#include "core/check.h"

namespace privsearch {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  PRIVSEARCH_CHECK(ctx_ != nullptr, "EVP_MD_CTX_new failed");
  PRIVSEARCH_CHECK(EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr) == 1,
                   "EVP_DigestInit_ex failed");
}

Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256::update(std::span<const std::uint8_t> data) {
  PRIVSEARCH_CHECK(EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data.data(), data.size()) == 1,
                   "EVP_DigestUpdate failed");
}

void Sha256::update(std::string_view text) {
  update({reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
}

Sha256Digest Sha256::finish() {
  Sha256Digest out{};
  unsigned int len = 0;
  PRIVSEARCH_CHECK(EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), out.data(), &len) == 1 &&
                       len == out.size(),
                   "EVP_DigestFinal_ex failed");
  return out;
}

Sha256Digest sha256(std::span<const std::uint8_t> data) {
  Sha256 h;
  h.update(data);
  return h.finish();
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (std::uint8_t b : bytes) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15]);
  }
  return s;
}

}  // namespace privsearch
