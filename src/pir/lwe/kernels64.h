// The LWE products over a uint8 matrix mod 2^64, for private scoring (q = 2^64, see lwe64.h):
//   batch matvec: out[i][r] = sum_c D[r][c] v_i[c]      (m queries share one pass over D)
//   matmul:       H[r][j]  += sum_c D[r][c] A[c][j]      (the hint H = D A, accumulated so A
//                                                         can come in chunks of rows)
// D is row-major with `stride` bytes per row (a multiple of 64); bytes past the used columns
// and the matching query entries must be zero. A and H are row-major with `ld` uint64 per row
// (ld a multiple of 32, padding zero). Everything wraps mod 2^64.
// The scalar functions are the reference; the AVX-512 paths (VNNI vpdpbusd for the matvec,
// vpmullq for the matmul) are chosen at run time and tested against them.
// Thread safety: pure; the matmul splits rows over `threads` std::threads.
#pragma once

#include <cstddef>
#include <cstdint>

namespace privsearch::pir {

// digits = 8: exact mod 2^64. digits = 6: v holds 48-bit values and out is exact mod 2^48
// (the caller shifts it; a modulus-switched query, lwe64.h), a quarter fewer products.
void matvec_u8_u64_batch(const std::uint8_t* d, std::size_t rows, std::size_t stride,
                         const std::uint64_t* v, std::size_t m, std::uint64_t* out,
                         std::size_t digits = 8);
void matvec_u8_u64_batch_scalar(const std::uint8_t* d, std::size_t rows, std::size_t stride,
                                const std::uint64_t* v, std::size_t m, std::uint64_t* out);

void matmul_u8_u64(const std::uint8_t* d, std::size_t rows, std::size_t cols, std::size_t stride,
                   const std::uint64_t* a, std::size_t ld, std::uint64_t* h, unsigned threads);
void matmul_u8_u64_scalar(const std::uint8_t* d, std::size_t rows, std::size_t cols,
                          std::size_t stride, const std::uint64_t* a, std::size_t ld,
                          std::uint64_t* h);

// out[i][r] = sum_j h[r][j] s_i[j] mod 2^32 for m vectors s_i of length n (the client's H s).
void dot_u32_batch(const std::uint32_t* h, std::size_t rows, std::size_t n, const std::uint32_t* s,
                   std::size_t m, std::uint32_t* out);
void dot_u32_batch_scalar(const std::uint32_t* h, std::size_t rows, std::size_t n,
                          const std::uint32_t* s, std::size_t m, std::uint32_t* out);

namespace detail {
bool lwe64_avx512_compiled();
void dot_u32_batch_avx512(const std::uint32_t* h, std::size_t rows, std::size_t n,
                          const std::uint32_t* s, std::size_t m, std::uint32_t* out);
// VNNI: v split into `digits` balanced signed byte digits, v = sum_k 2^(8k) t_k mod 2^(8 digits)
// with t_k in [-128, 128); D t_k is exact in int32 lanes over column chunks and is then
// widened, so D v = sum_k 2^(8k) (D t_k) mod 2^(8 digits). digits is 6 or 8.
void matvec_u8_u64_batch_vnni(const std::uint8_t* d, std::size_t rows, std::size_t stride,
                              const std::uint64_t* v, std::size_t m, std::uint64_t* out,
                              std::size_t digits);
// Rows [row_begin, row_end) of H (added to what H holds).
void matmul_u8_u64_avx512(const std::uint8_t* d, std::size_t row_begin, std::size_t row_end,
                          std::size_t cols, std::size_t stride, const std::uint64_t* a,
                          std::size_t ld, std::uint64_t* h);
}  // namespace detail

bool lwe64_kernels_use_vnni();
bool lwe64_kernels_use_avx512();

}  // namespace privsearch::pir
