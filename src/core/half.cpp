#include "core/half.h"

#include <cpuid.h>
#include <immintrin.h>

#include <cstring>

namespace privsearch {

namespace {

std::uint32_t bits_of(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}

float float_of(std::uint32_t b) {
  float v;
  std::memcpy(&v, &b, 4);
  return v;
}

// `significand` shifted right by `shift` (1..31), rounded to nearest, ties to even.
std::uint32_t shift_round_even(std::uint32_t significand, unsigned shift) {
  const std::uint32_t kept = significand >> shift;
  const std::uint32_t rest = significand & ((1u << shift) - 1);
  const std::uint32_t halfway = 1u << (shift - 1);
  return kept + ((rest > halfway || (rest == halfway && (kept & 1))) ? 1 : 0);
}

}  // namespace

// binary32: sign 1, exponent 8 (bias 127), fraction 23; binary16: 1, 5 (bias 15), 10.
std::uint16_t float_to_half_bits(float v) {
  const std::uint32_t f = bits_of(v);
  const auto sign = static_cast<std::uint16_t>((f >> 16) & 0x8000);
  const std::uint32_t exponent = (f >> 23) & 0xff;
  const std::uint32_t fraction = f & 0x7fffff;
  if (exponent == 0xff) {  // infinity, or NaN made quiet with the fraction's top bits
    return static_cast<std::uint16_t>(sign | 0x7c00 | (fraction ? 0x200 | (fraction >> 13) : 0));
  }
  const int e = static_cast<int>(exponent) - 127 + 15;  // the half's biased exponent
  if (e >= 31) return static_cast<std::uint16_t>(sign | 0x7c00);
  if (e <= 0) {
    // A half subnormal counts units of 2^-24: the 24-bit significand times 2^(exponent - 126).
    // Float subnormals (exponent 0) are below 2^-126, far under half a unit: zero.
    const unsigned shift = static_cast<unsigned>(14 - e);
    if (exponent == 0 || shift > 24) return sign;
    // A carry out of the fraction gives 0x400, the smallest normal half: the right encoding.
    return static_cast<std::uint16_t>(sign | shift_round_even(fraction | 0x800000, shift));
  }
  // A carry out of the fraction moves into the exponent, up to infinity (0x7c00): also right.
  const std::uint32_t rounded =
      (static_cast<std::uint32_t>(e) << 10) + shift_round_even(fraction, 13);
  return static_cast<std::uint16_t>(sign | rounded);
}

float half_bits_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1f;
  const std::uint32_t fraction = bits & 0x3ff;
  if (exponent == 0) {  // zero or subnormal: fraction x 2^-24, exact in a float
    const float magnitude = static_cast<float>(fraction) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) return float_of(sign | 0x7f800000 | (fraction << 13));
  return float_of(sign | ((exponent - 15 + 127) << 23) | (fraction << 13));
}

namespace detail {

bool f16c_available() {
  static const bool available = __builtin_cpu_supports("avx") && [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
  }();
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
