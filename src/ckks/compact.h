// Compact result ciphertexts: the provider's last step before sending scores.
//
// From a ciphertext (c0, c1) at any level:
//  1. mod-switch to level 0 (modulus q_0);
//  2. multiply by 2^t (exact, in R_{q_0}) so that scale * 2^t * value_bound is about q_0 / 4:
//     the message then fills the modulus and no top bits are wasted;
//  3. switch to the power-of-two modulus 2^k and keep only the top b_0 bits of c0 and b_1 bits
//     of c1:  c_i'' = round(c_i * 2^(b_i) / q_0) mod 2^(b_i),  k = max(b_0, b_1).
// Decryption (client): m = c0'' * 2^(k - b0) + c1'' * 2^(k - b1) * s  (mod 2^k) at scale
// scale * 2^t * 2^k / q_0.
// Error model (canonical embedding, independent uniform rounding errors): a rounding error of
// width w = 2^(k - b) per coefficient gives slot errors of standard deviation w*sqrt(n/12) for
// c0 and w*n*sqrt(2/(3*12)) for c1 (multiplied by the ternary s); the predicted worst slot is
// 5 standard deviations of the sum. choose_compact_layout() picks the smallest b_0, b_1 that
// meet a requested precision, and predicted_compact_precision_bits() reports it.
// Thread safety: pure functions. Constant time: public data only (the provider's ciphertext).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ckks/ciphertext.h"
#include "ckks/params.h"
#include "core/status.h"

namespace privsearch::ckks {

struct CompactOptions {
  double value_bound = 1.0;      // max |slot value| the ciphertext may hold
  double precision_bits = 20.0;  // requested bits of precision added error may not exceed
};

struct CompactLayout {
  int log_modulus = 0;    // k
  int c0_bits = 0;        // b_0
  int c1_bits = 0;        // b_1
  int scale_up_bits = 0;  // t
};

class CompactCiphertext {
 public:
  CompactCiphertext() = default;
  CompactCiphertext(const ParamsId& id, const CompactLayout& layout, double scale,
                    std::vector<std::uint64_t> c0, std::vector<std::uint64_t> c1)
      : params_id_(id), layout_(layout), scale_(scale), c0_(std::move(c0)), c1_(std::move(c1)) {}
  const ParamsId& params_id() const { return params_id_; }
  const CompactLayout& layout() const { return layout_; }
  // Scale of the message modulo 2^k.
  double scale() const { return scale_; }
  const std::vector<std::uint64_t>& c0() const { return c0_; }  // n values below 2^b0
  const std::vector<std::uint64_t>& c1() const { return c1_; }  // n values below 2^b1
  bool operator==(const CompactCiphertext& o) const {
    return params_id_ == o.params_id_ && layout_.log_modulus == o.layout_.log_modulus &&
           layout_.c0_bits == o.layout_.c0_bits && layout_.c1_bits == o.layout_.c1_bits &&
           scale_ == o.scale_ && c0_ == o.c0_ && c1_ == o.c1_;
  }

 private:
  ParamsId params_id_{};
  CompactLayout layout_;
  double scale_ = 0;
  std::vector<std::uint64_t> c0_, c1_;
};

// Bits of precision (log2 of value range over predicted worst slot error) that the compaction
// itself leaves, for a layout and the resulting scale.
double predicted_compact_precision_bits(const Params& params, const CompactLayout& layout,
                                        double compact_scale, double value_bound);

// The layout for a ciphertext of the given scale: kInvalidArgument if the options are not
// finite/positive, kOutOfRange if the requested precision would need more than 62 bits.
Result<CompactLayout> choose_compact_layout(const Params& params, double scale,
                                            const CompactOptions& options);

Result<CompactCiphertext> compact(const Params& params, const Ciphertext& ct,
                                  const CompactOptions& options);

std::vector<std::uint8_t> serialize_compact(const CompactCiphertext& ct);
Result<CompactCiphertext> deserialize_compact(const Params& params,
                                              std::span<const std::uint8_t> bytes);

}  // namespace privsearch::ckks
