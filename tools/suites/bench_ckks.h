// `privsearch bench ckks`: single-thread timings of the CKKS core for each named preset.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "harness/measure.h"

namespace privsearch::tools {

struct CkksBenchOptions {
  std::vector<std::string> presets;  // empty = all secure presets
  std::size_t runs = 50;
  std::size_t warmup = 5;
};

// One preset's figures. Timings are per operation at two data primes (level 1) unless named
// otherwise; precisions are bits of max error for values in [-1, 1].
struct CkksPresetFigures {
  std::size_t n = 0, data_primes_timed = 0;
  double log_qp = 0;
  std::string ntt_path;
  TimingStats ntt_forward, ntt_inverse, encode, decode, keygen, encrypt_symmetric,
      encrypt_symmetric_serialize, encrypt_public, decrypt, decrypt_decode_last_level,
      multiply_plain, rescale, rotate_last_level, rotate_fresh, compact, compact_decrypt_decode;
  std::optional<TimingStats> ntt_forward_scalar;  // when the default path is not scalar
  double galois_keygen_ms = 0;                    // per key
  std::size_t galois_key_bytes = 0;
  double hoisted_rotation_us = 0, hoist16_total_us = 0, double_hoisted_rotation_us = 0;
  double rotate_precision_bits = 0;
  std::size_t compact_response_bytes = 0;
  double compact_response_predicted_bits = 0, compact_response_precision_bits = 0;
  int compact_log_modulus = 0, compact_c0_bits = 0, compact_c1_bits = 0, compact_scale_up_bits = 0;
  std::size_t ciphertext_seeded_bytes = 0, ciphertext_bytes = 0, public_key_bytes = 0;
  double encrypt_symmetric_precision_bits = 0, encrypt_public_precision_bits = 0;
  double multiply_plain_rescale_precision_bits = 0;
  nlohmann::json to_json() const;
};

struct CkksBenchResult {
  nlohmann::json machine;
  std::size_t runs = 0, warmup = 0;
  std::map<std::string, CkksPresetFigures> presets;
  // {"suite": "ckks", "machine": {...}, "presets": {name: {fields}}}
  nlohmann::json to_json() const;
};

// Fails (kInternal) if a correctness check after timing fails.
Result<CkksBenchResult> run_ckks_bench(const CkksBenchOptions& options);

}  // namespace privsearch::tools
