// NTT-friendly primes and primitive roots.
//
// SEAL's rule (CoeffModulus::Create): for each bit size b, take the largest primes below 2^b
// that are 1 mod 2n, in decreasing order; when several moduli share a bit size the chain takes
// them from the smallest of that group upward, so bits {60, 40, 60} at n = 8192 give
// q0 = 1152921504606748673, q1 = 1099511480321, p = 1152921504606830593 (the paper's Table 3).
// Thread safety: pure functions. WARNING: not constant time; public values only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"

namespace privsearch::ring {

// Deterministic Miller-Rabin for 64-bit integers (bases 2..37 suffice below 3.3e24).
bool is_prime(std::uint64_t x);

// The `count` largest primes p < 2^bits with p = 1 mod 2n and p > 2^(bits-1), decreasing.
Result<std::vector<std::uint64_t>> largest_ntt_primes(int bits, std::size_t n, std::size_t count);

// One prime per entry of `bit_sizes`, chosen by SEAL's rule (see header).
Result<std::vector<std::uint64_t>> ntt_primes_for_bit_sizes(std::size_t n,
                                                            std::span<const int> bit_sizes);

// The smallest primitive 2n-th root of unity modulo the prime q (q = 1 mod 2n).
Result<std::uint64_t> minimal_primitive_root(std::uint64_t q, std::size_t two_n);

}  // namespace privsearch::ring
