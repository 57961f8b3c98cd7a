// AVX-512 VNNI matrix-vector kernel (compiled with -mavx512vnni, called after a CPUID check).
//
// vpdpbusd multiplies 4 unsigned bytes by 4 signed bytes and adds the sum to a 32-bit lane: 64
// byte products per instruction. The uint32 query is split into balanced signed byte digits,
// v = sum_k d_k 2^(8k) mod 2^32 with d_k in [-128, 128), so
//   D v = sum_k 2^(8k) (D d_k)  mod 2^32,
// four vpdpbusd per 64 database bytes against four vpmovzxbd + vpmulld + vpaddd. Wrap-around of
// the int32 lanes is harmless: everything is mod 2^32.
#include "pir/lwe/kernels.h"

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
#include <immintrin.h>

#include <vector>

#include "pir/lwe/avx512_hsum.h"

namespace privsearch::pir::detail {

bool lwe_vnni_compiled() { return true; }

void matvec_u8_u32_vnni(const std::uint8_t* d, std::size_t rows, std::size_t stride,
                        const std::uint32_t* v, std::uint32_t* out) {
  // stride is a multiple of 64 (DatabaseShape).
  std::vector<std::int8_t> digits(4 * stride);
  for (std::size_t c = 0; c < stride; ++c) {
    std::int64_t x = v[c];
    for (std::size_t k = 0; k < 4; ++k) {
      const std::int64_t dk = static_cast<std::int64_t>(static_cast<std::int8_t>(x & 0xff));
      digits[k * stride + c] = static_cast<std::int8_t>(dk);
      x = (x - dk) >> 8;
    }
  }
  const std::int8_t* q0 = digits.data();
  const std::int8_t* q1 = q0 + stride;
  const std::int8_t* q2 = q1 + stride;
  const std::int8_t* q3 = q2 + stride;
  auto combine = [](__m512i a0, __m512i a1, __m512i a2, __m512i a3) {
    const std::uint32_t s0 = hsum_u32(a0);
    const std::uint32_t s1 = hsum_u32(a1);
    const std::uint32_t s2 = hsum_u32(a2);
    const std::uint32_t s3 = hsum_u32(a3);
    return s0 + (s1 << 8) + (s2 << 16) + (s3 << 24);
  };
  std::size_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const std::uint8_t* r0 = d + r * stride;
    const std::uint8_t* r1 = r0 + stride;
    const std::uint8_t* r2 = r1 + stride;
    const std::uint8_t* r3 = r2 + stride;
    // Sixteen named accumulators: an indexed array would be spilled to the stack.
    __m512i a00 = _mm512_setzero_si512(), a01 = a00, a02 = a00, a03 = a00;
    __m512i a10 = a00, a11 = a00, a12 = a00, a13 = a00;
    __m512i a20 = a00, a21 = a00, a22 = a00, a23 = a00;
    __m512i a30 = a00, a31 = a00, a32 = a00, a33 = a00;
    for (std::size_t c = 0; c < stride; c += 64) {
      const __m512i k0 = _mm512_loadu_si512(q0 + c);
      const __m512i k1 = _mm512_loadu_si512(q1 + c);
      const __m512i k2 = _mm512_loadu_si512(q2 + c);
      const __m512i k3 = _mm512_loadu_si512(q3 + c);
      const __m512i x0 = _mm512_loadu_si512(r0 + c);
      a00 = _mm512_dpbusd_epi32(a00, x0, k0);
      a01 = _mm512_dpbusd_epi32(a01, x0, k1);
      a02 = _mm512_dpbusd_epi32(a02, x0, k2);
      a03 = _mm512_dpbusd_epi32(a03, x0, k3);
      const __m512i x1 = _mm512_loadu_si512(r1 + c);
      a10 = _mm512_dpbusd_epi32(a10, x1, k0);
      a11 = _mm512_dpbusd_epi32(a11, x1, k1);
      a12 = _mm512_dpbusd_epi32(a12, x1, k2);
      a13 = _mm512_dpbusd_epi32(a13, x1, k3);
      const __m512i x2 = _mm512_loadu_si512(r2 + c);
      a20 = _mm512_dpbusd_epi32(a20, x2, k0);
      a21 = _mm512_dpbusd_epi32(a21, x2, k1);
      a22 = _mm512_dpbusd_epi32(a22, x2, k2);
      a23 = _mm512_dpbusd_epi32(a23, x2, k3);
      const __m512i x3 = _mm512_loadu_si512(r3 + c);
      a30 = _mm512_dpbusd_epi32(a30, x3, k0);
      a31 = _mm512_dpbusd_epi32(a31, x3, k1);
      a32 = _mm512_dpbusd_epi32(a32, x3, k2);
      a33 = _mm512_dpbusd_epi32(a33, x3, k3);
    }
    out[r] = combine(a00, a01, a02, a03);
    out[r + 1] = combine(a10, a11, a12, a13);
    out[r + 2] = combine(a20, a21, a22, a23);
    out[r + 3] = combine(a30, a31, a32, a33);
  }
  for (; r < rows; ++r) {
    const std::uint8_t* row = d + r * stride;
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    for (std::size_t c = 0; c < stride; c += 64) {
      const __m512i x = _mm512_loadu_si512(row + c);
      a0 = _mm512_dpbusd_epi32(a0, x, _mm512_loadu_si512(q0 + c));
      a1 = _mm512_dpbusd_epi32(a1, x, _mm512_loadu_si512(q1 + c));
      a2 = _mm512_dpbusd_epi32(a2, x, _mm512_loadu_si512(q2 + c));
      a3 = _mm512_dpbusd_epi32(a3, x, _mm512_loadu_si512(q3 + c));
    }
    out[r] = combine(a0, a1, a2, a3);
  }
}

}  // namespace privsearch::pir::detail

namespace privsearch::pir::detail {

// AVX-512BW variant: the query split into two balanced 16-bit digits, the database bytes
// widened to 16 bits, vpmaddwd (two products per 32-bit lane, exact) and wrapping vpaddd.
void matvec_u8_u32_madd(const std::uint8_t* d, std::size_t rows, std::size_t stride,
                        const std::uint32_t* v, std::uint32_t* out) {
  std::vector<std::int16_t> digits(2 * stride);
  for (std::size_t c = 0; c < stride; ++c) {
    const std::int64_t x = v[c];
    const std::int64_t lo = static_cast<std::int64_t>(static_cast<std::int16_t>(x & 0xffff));
    digits[c] = static_cast<std::int16_t>(lo);
    digits[stride + c] = static_cast<std::int16_t>(((x - lo) >> 16) & 0xffff);
  }
  const std::int16_t* lo = digits.data();
  const std::int16_t* hi = lo + stride;
  std::size_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const std::uint8_t* rp[4] = {d + r * stride, d + (r + 1) * stride, d + (r + 2) * stride,
                                 d + (r + 3) * stride};
    __m512i l0 = _mm512_setzero_si512(), l1 = l0, l2 = l0, l3 = l0;
    __m512i h0 = l0, h1 = l0, h2 = l0, h3 = l0;
    for (std::size_t c = 0; c < stride; c += 32) {
      const __m512i kl = _mm512_loadu_si512(lo + c);
      const __m512i kh = _mm512_loadu_si512(hi + c);
      auto widen = [&](int t) {
        return _mm512_cvtepu8_epi16(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rp[t] + c)));
      };
      const __m512i x0 = widen(0), x1 = widen(1), x2 = widen(2), x3 = widen(3);
      l0 = _mm512_add_epi32(l0, _mm512_madd_epi16(x0, kl));
      h0 = _mm512_add_epi32(h0, _mm512_madd_epi16(x0, kh));
      l1 = _mm512_add_epi32(l1, _mm512_madd_epi16(x1, kl));
      h1 = _mm512_add_epi32(h1, _mm512_madd_epi16(x1, kh));
      l2 = _mm512_add_epi32(l2, _mm512_madd_epi16(x2, kl));
      h2 = _mm512_add_epi32(h2, _mm512_madd_epi16(x2, kh));
      l3 = _mm512_add_epi32(l3, _mm512_madd_epi16(x3, kl));
      h3 = _mm512_add_epi32(h3, _mm512_madd_epi16(x3, kh));
    }
    auto fold = [](__m512i l, __m512i h) { return hsum_u32(l) + (hsum_u32(h) << 16); };
    out[r] = fold(l0, h0);
    out[r + 1] = fold(l1, h1);
    out[r + 2] = fold(l2, h2);
    out[r + 3] = fold(l3, h3);
  }
  for (; r < rows; ++r) {
    const std::uint8_t* row = d + r * stride;
    std::uint32_t acc = 0;
    for (std::size_t c = 0; c < stride; ++c) acc += row[c] * v[c];
    out[r] = acc;
  }
}

}  // namespace privsearch::pir::detail

#else
// Built without AVX-512 (the WebAssembly client core): never dispatched to (kernels.cpp).
namespace privsearch::pir::detail {
bool lwe_vnni_compiled() { return false; }
void matvec_u8_u32_vnni(const std::uint8_t* d, std::size_t rows, std::size_t stride,
                        const std::uint32_t* v, std::uint32_t* out) {
  matvec_u8_u32_scalar(d, rows, stride, v, out);
}
void matvec_u8_u32_madd(const std::uint8_t* d, std::size_t rows, std::size_t stride,
                        const std::uint32_t* v, std::uint32_t* out) {
  matvec_u8_u32_scalar(d, rows, stride, v, out);
}
}  // namespace privsearch::pir::detail
#endif
