// AVX-512 build of the RNS kernels (same loops as the baseline; the compiler vectorizes them
// with vpmuludq on 8 x 64-bit lanes). Called after a CPUID check.
#include <cstddef>
#include <cstdint>

#include "pir/zippir/rns.h"

namespace privsearch::pir::detail {

#include "pir/zippir/rns_kernels.inc"

bool rns_avx512_compiled() { return true; }

void rns_matvec_avx512(std::span<const std::uint32_t> primes, const std::uint32_t* p,
                       std::size_t rows, std::size_t cols, const std::uint32_t* x,
                       std::uint32_t* out) {
  rns_matvec_body(primes.data(), primes.size(), p, rows, cols, x, out);
}

void rns_words_avx512(const std::uint32_t* words, std::size_t nwords, const std::uint32_t* table,
                      std::size_t nprimes, const std::uint32_t* primes, std::uint32_t* out) {
  std::uint64_t acc[1024];
  rns_words_body(words, nwords, table, nprimes, primes, out, acc);
}

}  // namespace privsearch::pir::detail
