// Horizontal sum of 16 uint32 lanes mod 2^32 with wrapping vector adds (GCC's
// _mm512_reduce_add_epi32 adds in signed int, which is undefined on overflow). Include only from
// translation units compiled for AVX-512.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace privsearch::pir::detail {

static inline std::uint32_t hsum_u32(__m512i v) {
  const __m256i s = _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
  __m128i t = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
  t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0x4E));
  t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0xB1));
  return static_cast<std::uint32_t>(_mm_cvtsi128_si32(t));
}

}  // namespace privsearch::pir::detail
