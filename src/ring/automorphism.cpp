#include "ring/automorphism.h"

#include <fmt/format.h>

#include <bit>

#include "core/check.h"
#include "ring/ntt.h"
#include "ring/shoup_kernels.h"

namespace privsearch::ring {

std::uint64_t galois_elt_for_step(int step, std::size_t n) {
  const u64 two_n = 2 * static_cast<u64>(n);
  const long long order = static_cast<long long>(n / 2);
  long long k = step % order;
  if (k < 0) k += order;
  u64 g = 1;
  for (long long i = 0; i < k; ++i) g = (g * 5) % two_n;
  return g;
}

Result<int> step_for_galois_elt(std::uint64_t galois_elt, std::size_t n) {
  const u64 two_n = 2 * static_cast<u64>(n);
  u64 g = 1;
  for (std::size_t k = 0; k < n / 2; ++k) {
    if (g == galois_elt) return static_cast<int>(k);
    g = (g * 5) % two_n;
  }
  return not_found_error(
      fmt::format("Galois element {} is not a power of 5 mod {}", galois_elt, two_n));
}

void apply_galois_coeff(const std::uint64_t* in, std::uint64_t galois_elt, const Modulus& q,
                        std::uint64_t* out, std::size_t n) {
  const u64 mask = 2 * static_cast<u64>(n) - 1;
  const u64 qv = q.value();
  u64 idx = 0;
  for (std::size_t j = 0; j < n; ++j, idx = (idx + galois_elt) & mask) {
    const u64 target = idx & (n - 1);
    const u64 negate = idx >> std::countr_zero(n);  // 1 if idx >= n
    const u64 v = in[j];
    const u64 neg_v = reduce_once(qv - v, qv);
    out[target] = negate ? neg_v : v;
  }
}

Result<GaloisPermutation> GaloisPermutation::create(std::uint64_t galois_elt, std::size_t n) {
  const u64 two_n = 2 * static_cast<u64>(n);
  if ((galois_elt & 1) == 0 || galois_elt >= two_n) {
    return invalid_argument_error(
        fmt::format("Galois element {} is not odd and below 2n = {}", galois_elt, two_n));
  }
  GaloisPermutation p;
  p.galois_elt_ = galois_elt;
  p.perm_.resize(n);
  const int log_n = std::countr_zero(n);
  for (std::size_t i = 0; i < n; ++i) {
    const u64 e = 2 * reverse_bits(i, log_n) + 1;
    const u64 eg = (e * galois_elt) & (two_n - 1);
    p.perm_[i] = static_cast<std::uint32_t>(reverse_bits((eg - 1) / 2, log_n));
  }
  if (n >= 8) {
    p.block_source_.resize(n / 8);
    p.block_lanes_.resize(n / 8);
    for (std::size_t h = 0; h < n / 8; ++h) {
      const std::uint32_t source = p.perm_[8 * h] >> 3;
      std::uint64_t lanes = 0;
      for (std::size_t l = 0; l < 8; ++l) {
        const std::uint32_t from = p.perm_[8 * h + l];
        PRIVSEARCH_CHECK(from >> 3 == source, "Galois permutation lost its block structure");
        lanes |= static_cast<std::uint64_t>(from & 7) << (8 * l);
      }
      p.block_source_[h] = source;
      p.block_lanes_[h] = lanes;
    }
  }
  return p;
}

void GaloisPermutation::apply(const std::uint64_t* in, std::uint64_t* out) const {
  if (!block_source_.empty() && detail::blocks_use_avx512()) {
    return detail::permute_blocks_avx512(in, block_source_.data(), block_lanes_.data(), out,
                                         block_source_.size());
  }
  const std::size_t n = perm_.size();
  for (std::size_t i = 0; i < n; ++i) out[i] = in[perm_[i]];
}

void GaloisPermutation::apply_add(const std::uint64_t* in, std::uint64_t* out,
                                  const Modulus& q) const {
  if (!block_source_.empty() && detail::blocks_use_avx512()) {
    return detail::add_permuted_blocks_avx512(in, block_source_.data(), block_lanes_.data(), out,
                                              block_source_.size(), q.value());
  }
  const std::size_t n = perm_.size();
  for (std::size_t i = 0; i < n; ++i) out[i] = reduce_once(out[i] + in[perm_[i]], q.value());
}

}  // namespace privsearch::ring
