// IEEE 754 binary16 ("half") values widened to float32, exactly (every half is a float): with
// F16C's vcvtph2ps, 8 at a time, when the CPU has it (x86-64-v3 does; the project's x86-64-v2
// baseline does not, so it is chosen at run time), else one value at a time by bit arithmetic.
// The one-value conversions do not use the compiler's _Float16, which clang before 15 lacks on
// x86 (the fuzz build).
// Thread safety: pure.
#pragma once

#include <cstddef>
#include <cstdint>

namespace privsearch {

// One value each way: a float rounded to the nearest half (ties to even; past the largest half,
// 65504, to infinity; NaN stays NaN, quiet), and a half widened exactly.
std::uint16_t float_to_half_bits(float v);
float half_bits_to_float(std::uint16_t bits);

// out[j] = the float of the little-endian half at raw[2j .. 2j + 2), j < n.
void halves_to_floats(const std::uint8_t* raw, float* out, std::size_t n);

namespace detail {
bool f16c_available();
void halves_to_floats_scalar(const std::uint8_t* raw, float* out, std::size_t n);
void halves_to_floats_f16c(const std::uint8_t* raw, float* out, std::size_t n);
}  // namespace detail

}  // namespace privsearch
