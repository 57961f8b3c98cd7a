#include "core/secure_buffer.h"

#include <openssl/crypto.h>

#include "core/constant_time.h"

namespace privsearch {

void secure_zero(void* data, std::size_t size) { OPENSSL_cleanse(data, size); }

namespace ct {
bool memory_equal(const void* a, const void* b, std::size_t size) {
  return CRYPTO_memcmp(a, b, size) == 0;
}
}  // namespace ct

}  // namespace privsearch
