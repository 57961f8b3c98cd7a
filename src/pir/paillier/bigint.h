// Big-integer helpers over GMP shared by Paillier, multi-exponentiation and ZipPIR.
//
// Secrets: GMP allocates limbs itself, so wiping secret limbs means wiping every block GMP
// frees. install_wiping_gmp_allocator() installs (once per process, idempotent) allocation
// functions that OPENSSL_cleanse a block before freeing it and before a realloc drops it. It is
// called by everything that creates secret big integers (key generation, private-key loading).
// Thread safety: the install is std::call_once; the other functions are pure.
#pragma once

#include <gmpxx.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/csprng.h"
#include "core/status.h"

namespace privsearch::pir {

void install_wiping_gmp_allocator();

// Uniform in [0, bound) by rejection sampling on bit_length(bound) random bits (the number of
// draws depends only on public randomness, not on a secret). bound > 0.
mpz_class random_below(const mpz_class& bound, Prng& prng);
// Exactly `bits` random bits (top bit not forced).
mpz_class random_bits(std::size_t bits, Prng& prng);

// Little-endian fixed-width encoding; kOutOfRange if `value` needs more than `width` bytes or
// is negative.
Status write_fixed(const mpz_class& value, std::span<std::uint8_t> out);
mpz_class read_fixed(std::span<const std::uint8_t> bytes);
std::vector<std::uint8_t> to_fixed_bytes(const mpz_class& value, std::size_t width);

std::size_t bit_length(const mpz_class& v);
inline std::size_t byte_length_of_bits(std::size_t bits) { return (bits + 7) / 8; }

}  // namespace privsearch::pir
