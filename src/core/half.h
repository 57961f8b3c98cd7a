// IEEE 754 binary16 ("half") values widened to float32, exactly (every half is a float): with
// F16C's vcvtph2ps, 8 at a time, when the CPU has it (x86-64-v3 does; the project's x86-64-v2
// baseline does not, so it is chosen at run time), else one value at a time through the
// compiler's _Float16 conversion (a library call per value: ~5x slower over a rerank's rows).
// Thread safety: pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace privsearch {

// One value each way (round to nearest even), through the compiler's _Float16.
inline std::uint16_t float_to_half_bits(float v) {
  const _Float16 h = static_cast<_Float16>(v);
  std::uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}
inline float half_bits_to_float(std::uint16_t bits) {
  _Float16 h;
  std::memcpy(&h, &bits, 2);
  return static_cast<float>(h);
}

// out[j] = the float of the little-endian half at raw[2j .. 2j + 2), j < n.
void halves_to_floats(const std::uint8_t* raw, float* out, std::size_t n);

namespace detail {
bool f16c_available();
void halves_to_floats_scalar(const std::uint8_t* raw, float* out, std::size_t n);
void halves_to_floats_f16c(const std::uint8_t* raw, float* out, std::size_t n);
}  // namespace detail

}  // namespace privsearch
