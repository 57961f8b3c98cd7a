// The two LWE products over a uint8 database, mod 2^32 (wrap-around of uint32 lanes):
//   matvec: out[r] = sum_c D[r][c] v[c]            (the online answer, memory-bandwidth bound)
//   matmul: H[r][j] = sum_c D[r][c] A[c][j]         (the offline hint H = D A)
// D is row-major with `stride` bytes per row; bytes past `cols` must be zero and v (length
// stride) must be zero there too, so kernels may run over whole 64-byte blocks.
// A and H are row-major with `ld` uint32 per row (ld >= n, multiple of 16, padding zero).
// The AVX-512 paths (VNNI vpdpbusd where present, else vpmulld) are chosen at run time from
// CPUID; the scalar ones are the reference.
// Thread safety: pure; matmul splits rows over `threads` std::threads.
#pragma once

#include <cstddef>
#include <cstdint>

namespace privsearch::pir {

void matvec_u8_u32(const std::uint8_t* d, std::size_t rows, std::size_t stride,
                   const std::uint32_t* v, std::uint32_t* out);
void matvec_u8_u32_scalar(const std::uint8_t* d, std::size_t rows, std::size_t stride,
                          const std::uint32_t* v, std::uint32_t* out);

void matmul_u8_u32(const std::uint8_t* d, std::size_t rows, std::size_t cols, std::size_t stride,
                   const std::uint32_t* a, std::size_t n, std::size_t ld, std::uint32_t* h,
                   unsigned threads);
void matmul_u8_u32_scalar(const std::uint8_t* d, std::size_t rows, std::size_t cols,
                          std::size_t stride, const std::uint32_t* a, std::size_t n, std::size_t ld,
                          std::uint32_t* h);

bool lwe_kernels_use_avx512();
bool lwe_kernels_use_vnni();
// The AVX-512 (vpmulld) kernel even where VNNI exists (tests compare all three paths).
void matvec_u8_u32_avx512_only(const std::uint8_t* d, std::size_t rows, std::size_t stride,
                               const std::uint32_t* v, std::uint32_t* out);

namespace detail {
bool lwe_avx512_compiled();
bool lwe_vnni_compiled();
// stride must be a multiple of 64.
void matvec_u8_u32_vnni(const std::uint8_t* d, std::size_t rows, std::size_t stride,
                        const std::uint32_t* v, std::uint32_t* out);
void matvec_u8_u32_madd(const std::uint8_t* d, std::size_t rows, std::size_t stride,
                        const std::uint32_t* v, std::uint32_t* out);
void matvec_u8_u32_avx512(const std::uint8_t* d, std::size_t rows, std::size_t stride,
                          const std::uint32_t* v, std::uint32_t* out);
// Rows [row_begin, row_end) of H; H rows must be zero on entry.
void matmul_u8_u32_avx512(const std::uint8_t* d, std::size_t row_begin, std::size_t row_end,
                          std::size_t cols, std::size_t stride, const std::uint32_t* a,
                          std::size_t ld, std::uint32_t* h);
}  // namespace detail

}  // namespace privsearch::pir
