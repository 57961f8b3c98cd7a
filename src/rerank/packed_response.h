// The packed kernel's response ciphertext: c1 whole, c0 only at the K score coefficients, both
// switched to small power-of-two moduli (provider side; decryption in
// rerank/client/packed_scores.h).
//
// From the kernel's output (c0, c1) at modulus q (c0 + c1 s = Delta m + e, coefficient form):
//   c1'' = round(c1 2^b1 / q) mod 2^b1   (all n coefficients),
//   c0''_p = round(c0_p 2^b0 / q) mod 2^b0   (p in the output's score coefficients, slot order),
// and the client reads m_p = c0''_p 2^(k - b0) + (c1'' s)_p 2^(k - b1) mod 2^k at scale
// Delta 2^k / q, k = max(b0, b1). The other n - K coefficients of c0 are never sent: nothing of
// them reaches the client (they are zero plus noise after packing, but unsent is simpler still).
// Error model (coefficient domain, independent uniform rounding errors): rounding c1 to width
// w1 = q / 2^b1 adds (r1 s)_p with standard deviation w1 sqrt(n / 18) (ternary s with ~2n/3
// non-zero coefficients), rounding c0 adds w0 / sqrt(12); the worst of the K scores is taken at
// 5 deviations of the sum. choose_packed_bits() gives each half of the error budget
// value_bound 2^-precision_bits / sqrt(2).
// b1 <= bits(q) - log2(n) - 2 so that the client's exact integer product c1'' s (centred
// digits, |(c1'' s)_p| <= n 2^(b1-1)) stays below q / 2: rerank/client/packed_scores.cpp
// computes it modulo q with two NTTs.
// Format: magic "PSPK" | u16 version 1 | params id (32) | u8 b0 | u8 b1 | f64 scale |
// u32 count | u32 n | count values of b0 bits | n values of b1 bits; exact length, values below
// their moduli, count and n checked against the caller's expectation before allocating, the
// scale of the shape check_packed_scale describes.
// Thread safety: pure functions. Constant time: public data only (the provider's ciphertext).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ckks/ciphertext.h"
#include "ckks/compact.h"
#include "ckks/params.h"
#include "core/status.h"
#include "rerank/layout.h"

namespace privsearch::rerank {

struct PackedCiphertext {
  ckks::ParamsId params_id{};
  int c0_bits = 0;
  int c1_bits = 0;
  double scale = 0;               // of the message modulo 2^max(b0, b1)
  std::vector<std::uint64_t> c0;  // the score coefficients, below 2^b0
  std::vector<std::uint64_t> c1;  // n values below 2^b1
  int log_modulus() const { return c0_bits > c1_bits ? c0_bits : c1_bits; }
  bool operator==(const PackedCiphertext&) const = default;
};

// The coefficients of output `output` that carry scores, in candidate order (layout.h).
std::vector<std::size_t> packed_positions(const KernelLayout& layout, std::size_t output);

struct PackedBits {
  int c0_bits = 0;
  int c1_bits = 0;
};

// kInvalidArgument for non-finite or non-positive options; kOutOfRange when the precision needs
// more bits than the modulus q has or than the client's exact product allows.
Result<PackedBits> choose_packed_bits(const ckks::Params& params, double scale,
                                      const ckks::CompactOptions& options);

// Predicted bits of precision (log2 of value_bound over the 5-deviation worst error) of a layout.
double predicted_packed_precision_bits(const ckks::Params& params, const PackedBits& bits,
                                       double scale, double value_bound);

// ct at level 0 (the packed kernel's output); positions: the coefficients to send of c0.
Result<PackedCiphertext> compact_packed(const ckks::Params& params, const ckks::Ciphertext& ct,
                                        std::span<const std::size_t> positions,
                                        const ckks::CompactOptions& options);

// A packed response's scale is 2^(delta_bits + rho) 2^k / q with rho an integer row scale in
// [1, 40] (rerank/packed.h): anything else (a tiny or subnormal scale would turn every score into
// an infinity) is kDataLoss.
Status check_packed_scale(const ckks::Params& params, int log_modulus, double scale);

std::vector<std::uint8_t> serialize_packed(const PackedCiphertext& ct);
// `expected_count`: the number of score coefficients the client's layout puts in this output.
Result<PackedCiphertext> deserialize_packed(const ckks::Params& params,
                                            std::span<const std::uint8_t> bytes,
                                            std::size_t expected_count);

}  // namespace privsearch::rerank
