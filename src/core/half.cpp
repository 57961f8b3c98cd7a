#include "core/half.h"

#include <immintrin.h>

#include <cstring>

namespace privsearch {
namespace detail {

bool f16c_available() {
  static const bool available = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
  return available;
}

void halves_to_floats_scalar(const std::uint8_t* raw, float* out, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) {
    std::uint16_t bits;
    std::memcpy(&bits, raw + 2 * j, 2);
    out[j] = half_bits_to_float(bits);
  }
}

__attribute__((target("avx,f16c"))) void halves_to_floats_f16c(const std::uint8_t* raw, float* out,
                                                               std::size_t n) {
  std::size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(raw + 2 * j));
    _mm256_storeu_ps(out + j, _mm256_cvtph_ps(h));
  }
  halves_to_floats_scalar(raw + 2 * j, out + j, n - j);
}

}  // namespace detail

void halves_to_floats(const std::uint8_t* raw, float* out, std::size_t n) {
  if (detail::f16c_available()) {
    detail::halves_to_floats_f16c(raw, out, n);
  } else {
    detail::halves_to_floats_scalar(raw, out, n);
  }
}

}  // namespace privsearch
