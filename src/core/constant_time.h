// Constant-time helpers for secret-dependent selection and comparison.
// All functions are branch-free on their arguments (checked by reading the generated code with
// g++ -O2 on x86-64; the compiler may still be clever, so keep them simple).
#pragma once

#include <cstddef>
#include <cstdint>

namespace privsearch::ct {

// All ones if `bit` is 1, zero if 0. Precondition: bit in {0, 1}.
inline std::uint64_t mask_from_bit(std::uint64_t bit) { return std::uint64_t{0} - bit; }

// 1 if x == 0 else 0.
inline std::uint64_t is_zero(std::uint64_t x) { return 1 ^ ((x | (std::uint64_t{0} - x)) >> 63); }

// 1 if a == b else 0.
inline std::uint64_t equal(std::uint64_t a, std::uint64_t b) { return is_zero(a ^ b); }

// 1 if a < b (unsigned) else 0.
inline std::uint64_t less_than(std::uint64_t a, std::uint64_t b) {
  // Borrow of a - b, computed without a branch: see Hacker's Delight 2-12.
  return ((~a & b) | ((~a | b) & (a - b))) >> 63;
}

// `bit` ? a : b, for bit in {0, 1}.
inline std::uint64_t select(std::uint64_t bit, std::uint64_t a, std::uint64_t b) {
  const std::uint64_t m = mask_from_bit(bit);
  return (a & m) | (b & ~m);
}

// Memory comparison whose time depends only on `size` (CRYPTO_memcmp). True if equal.
bool memory_equal(const void* a, const void* b, std::size_t size);

}  // namespace privsearch::ct
