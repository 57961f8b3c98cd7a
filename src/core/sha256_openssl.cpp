// Sha256 (core/sha256.h) through OpenSSL EVP.
#include <openssl/evp.h>

#include "core/check.h"
#include "core/sha256.h"

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

Sha256Digest Sha256::finish() {
  Sha256Digest out{};
  unsigned int len = 0;
  PRIVSEARCH_CHECK(EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), out.data(), &len) == 1 &&
                       len == out.size(),
                   "EVP_DigestFinal_ex failed");
  return out;
}

}  // namespace privsearch
