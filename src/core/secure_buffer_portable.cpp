// secure_zero and the constant-time comparison for builds without OpenSSL: libc's
// explicit_bzero (a memset the compiler may not drop), and an or of every byte's difference
// (no early exit).
#include <string.h>

#include "core/constant_time.h"
#include "core/secure_buffer.h"

namespace privsearch {

void secure_zero(void* data, std::size_t size) { ::explicit_bzero(data, size); }

namespace ct {
bool memory_equal(const void* a, const void* b, std::size_t size) {
  const auto* x = static_cast<const unsigned char*>(a);
  const auto* y = static_cast<const unsigned char*>(b);
  unsigned char diff = 0;
  for (std::size_t i = 0; i < size; ++i) diff = static_cast<unsigned char>(diff | (x[i] ^ y[i]));
  return diff == 0;
}
}  // namespace ct

}  // namespace privsearch
