// ZipPIR's offline work per client and query: k_i = prod_j ck_r[j]^{P[i][j]} mod N^2 for every
// packed row i (Paillier "ciphertexts" ck_r expanded from the client's seed), i.e.
// Enc(P_i . r) with r = Dec(ck_r) known only to the client.
//
// Done naively that is d1' n exponentiations with ~3000-bit exponents (75 CPU-minutes at 1 GB).
// Here it is a matrix product in the exponent group, computed in three steps:
//  1. per row of the rescaled hint, g_r = prod_j ck_r[j]^{E[r][j]} (E has b bits);
//  2. k_i = prod_l g_{ik+l}^{gamma^l} by Horner (b squarings and one product per slot);
//  3. step 1 by the "four Russians" method over the bits of E: bit bases
//     beta_{j,t} = ck_r[j]^{2^t}, taken g at a time (g = 11 at 16,384 rows, chosen per shape);
//     each group's 2^g subset products form a
//     table (one product per entry) and each row multiplies in the entry its g bits select, so
//     each row costs b n / g products instead of about b n / 8 for per-row windowing.
// All products are 6144-bit Montgomery products, eight at a time on AVX-512 IFMA lanes
// (MontgomeryBatch). Groups split over threads, each with its own row accumulators.
// The exponents are public (derived from the database); nothing here touches a secret.
// Thread safety: pure functions; internal threads only.
#pragma once

#include <gmpxx.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/csprng.h"
#include "pir/paillier/paillier.h"

namespace privsearch::pir {

// The public mask M (d1 x n, uniform mod 2^32) added to H before rescaling. Without it a row of
// H that is zero (a byte position that is 0 in every record, like the high bytes of a length
// field) gives E = gamma - 1 throughout, whose slot carries |s| instead of the |s|/2 the client
// assumes; with it every E row is uniform whatever the database holds. The client adds back
// M_r . s for the rows it reads. Derived from A's seed (SHA-256 with a label), rows expanded like
// A.
Seed hint_mask_seed(const Seed& a_seed);

// E[r][j] = gamma - 1 - round((H[r][j] + M[r][j]) / 2^(32 - b)) mod gamma, rows x n (row-major),
// from H with `ld` words per row. `h` may be rows [first_row, first_row + rows) of a larger H (a
// row shard's part): the mask M is the database's, row for row.
std::vector<std::uint32_t> rescaled_hint_exponents(const std::uint32_t* h, std::size_t rows,
                                                   std::size_t n, std::size_t ld, int hint_bits,
                                                   const Seed& mask_seed,
                                                   std::size_t first_row = 0);

// The compression-key randomness ck_r for one query: n uniform units of Z_{N^2} from the client
// seed (16 bytes) and the query index. Identical on both sides.
std::vector<mpz_class> expand_compression_randomness(const PaillierPublicKey& pk,
                                                     std::span<const std::uint8_t> client_seed,
                                                     std::uint64_t query_index, std::size_t n);

struct HintEngineStats {
  std::size_t products = 0;  // Montgomery products performed
};

// k_i for i < ceil(rows / slots), exponents E (rows x n), slots per plaintext, b bits each.
// `cancel`, when given and set meanwhile (a server stopping), ends the work early: the result
// is then empty (minutes of CPU at real sizes are not worth finishing for nobody).
std::vector<mpz_class> compute_compressed_hint(const PaillierPublicKey& pk,
                                               std::span<const mpz_class> ck_r,
                                               std::span<const std::uint32_t> exponents,
                                               std::size_t rows, std::size_t n, std::size_t slots,
                                               int hint_bits, unsigned threads,
                                               HintEngineStats* stats = nullptr,
                                               const std::atomic<bool>* cancel = nullptr);

// Reference: Pippenger multi-exponentiation per packed row with GMP (tests, small sizes).
std::vector<mpz_class> compute_compressed_hint_reference(const PaillierPublicKey& pk,
                                                         std::span<const mpz_class> ck_r,
                                                         std::span<const std::uint32_t> exponents,
                                                         std::size_t rows, std::size_t n,
                                                         std::size_t slots, int hint_bits);

// P[i][j] = sum_l E[ik+l][j] gamma^l as a big integer (reference and RNS preparation).
mpz_class packed_hint_entry(std::span<const std::uint32_t> exponents, std::size_t rows,
                            std::size_t n, std::size_t slots, int hint_bits, std::size_t i,
                            std::size_t j);

}  // namespace privsearch::pir
