#include "ring/primes.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "ring/modulus.h"

namespace privsearch::ring {

namespace {
u64 pow_mod_u128(u64 b, u64 e, u64 m) {
  u128 r = 1 % m;
  u128 x = b % m;
  while (e != 0) {
    if (e & 1) r = (r * x) % m;
    x = (x * x) % m;
    e >>= 1;
  }
  return static_cast<u64>(r);
}
}  // namespace

bool is_prime(std::uint64_t x) {
  if (x < 2) return false;
  static constexpr u64 kSmall[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37};
  for (u64 p : kSmall) {
    if (x % p == 0) return x == p;
  }
  u64 d = x - 1;
  int s = 0;
  while ((d & 1) == 0) {
    d >>= 1;
    ++s;
  }
  for (u64 a : kSmall) {
    u64 y = pow_mod_u128(a, d, x);
    if (y == 1 || y == x - 1) continue;
    bool composite = true;
    for (int r = 1; r < s; ++r) {
      y = static_cast<u64>((static_cast<u128>(y) * y) % x);
      if (y == x - 1) {
        composite = false;
        break;
      }
    }
    if (composite) return false;
  }
  return true;
}

Result<std::vector<std::uint64_t>> largest_ntt_primes(int bits, std::size_t n, std::size_t count) {
  if (bits < 2 || bits > 61) {
    return invalid_argument_error(fmt::format("prime bit size {} outside [2, 61]", bits));
  }
  if (n == 0 || (n & (n - 1)) != 0) {
    return invalid_argument_error(fmt::format("ring degree `n` = {} is not a power of two", n));
  }
  const u64 two_n = 2 * static_cast<u64>(n);
  const u64 upper = u64{1} << bits;
  const u64 lower = u64{1} << (bits - 1);
  std::vector<std::uint64_t> primes;
  if (upper <= two_n) {
    return invalid_argument_error(fmt::format("no {}-bit primes are 1 mod 2n for n = {}", bits, n));
  }
  for (u64 candidate = upper - two_n + 1; candidate > lower && primes.size() < count;
       candidate -= two_n) {
    if (is_prime(candidate)) primes.push_back(candidate);
    if (candidate <= two_n) break;
  }
  if (primes.size() < count) {
    return invalid_argument_error(
        fmt::format("only {} primes of {} bits are 1 mod 2n for n = {}; {} requested",
                    primes.size(), bits, n, count));
  }
  return primes;
}

Result<std::vector<std::uint64_t>> ntt_primes_for_bit_sizes(std::size_t n,
                                                            std::span<const int> bit_sizes) {
  std::map<int, std::size_t> count_by_bits;
  for (int b : bit_sizes) ++count_by_bits[b];
  std::map<int, std::vector<std::uint64_t>> table;
  for (const auto& [bits, count] : count_by_bits) {
    PRIVSEARCH_ASSIGN_OR_RETURN(table[bits], largest_ntt_primes(bits, n, count));
  }
  std::vector<std::uint64_t> out;
  for (int b : bit_sizes) {
    // SEAL takes from the back of the decreasing list: the smallest of the group first.
    out.push_back(table[b].back());
    table[b].pop_back();
  }
  return out;
}

Result<std::uint64_t> minimal_primitive_root(std::uint64_t q, std::size_t two_n) {
  if (two_n < 2 || (two_n & (two_n - 1)) != 0 || (q - 1) % two_n != 0 || !is_prime(q)) {
    return invalid_argument_error(fmt::format("{} is not a prime that is 1 mod {}", q, two_n));
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const Modulus mod, Modulus::create(q));
  const u64 cofactor = (q - 1) / two_n;
  // Find any primitive 2n-th root g: g^(n) = -1 characterizes order exactly 2n.
  u64 g = 0;
  for (u64 x = 2; x < q; ++x) {
    const u64 cand = mod.pow(x, cofactor);
    if (mod.pow(cand, two_n / 2) == q - 1) {
      g = cand;
      break;
    }
  }
  if (g == 0) return internal_error("no primitive root found");
  // All primitive 2n-th roots are g^k for odd k; take the smallest so the choice is canonical.
  const u64 g2 = mod.mul(g, g);
  u64 best = g;
  u64 cur = g;
  for (std::size_t k = 1; k < two_n / 2; ++k) {
    cur = mod.mul(cur, g2);
    best = std::min(best, cur);
  }
  return best;
}

}  // namespace privsearch::ring
