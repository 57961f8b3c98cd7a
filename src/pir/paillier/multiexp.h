// Products of many powers, prod_i b_i^{e_i} mod M, for public non-negative exponents (homomorphic
// linear combinations of Paillier ciphertexts: compression, packed-key unpacking).
//
// multi_exp: Pippenger's bucket method (Pippenger 1980; the "bucket" form of Bernstein et al.):
// exponents cut into c-bit windows; per window each base is multiplied into the bucket of its
// digit, buckets are summed with the running-product trick (2 * 2^c products), windows combined
// by c squarings. About (bits / c) (n + 2^{c+1}) + bits multiplications against n (bits + bits/2)
// for square-and-multiply per base; c is chosen to minimize that count.
// multi_exp_batched: the same bucket method on MontgomeryBatch, eight windows at a time in the
// eight lanes (windows are independent until the final c-squaring Horner combination), so one
// multi-exponentiation runs on AVX-512 IFMA Montgomery products.
// multi_exp_naive: the per-base reference the tests compare against.
// Thread safety: pure functions.
#pragma once

#include <gmpxx.h>

#include <span>

#include "pir/paillier/mont_batch.h"

namespace privsearch::pir {

mpz_class multi_exp(std::span<const mpz_class> bases, std::span<const mpz_class> exponents,
                    const mpz_class& modulus);
mpz_class multi_exp_batched(const MontgomeryBatch& mb, std::span<const mpz_class> bases,
                            std::span<const mpz_class> exponents);
mpz_class multi_exp_naive(std::span<const mpz_class> bases, std::span<const mpz_class> exponents,
                          const mpz_class& modulus);
// The window multi_exp uses for n bases of `bits`-bit exponents.
int pippenger_window(std::size_t n, std::size_t bits);

}  // namespace privsearch::pir
